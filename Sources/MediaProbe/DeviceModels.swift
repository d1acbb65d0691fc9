/// Which ``DeviceProfile``s a device's model name (TXT `md`, eureka_info `model_name`) can mean.
///
/// Some names are one family ("Chromecast Ultra", "Google Nest Hub"); "Chromecast" is shared by
/// the 1st to 3rd generation dongles and, in field reports, Chromecast with Google TV, so it
/// stands for all of them. A name CastPrep does not know gives no profile at all: nothing is
/// judged rather than judged wrongly. A profile's own id or name is accepted too.
public struct DeviceModelMatch: Sendable, Hashable {
    /// The model name as the device reported it.
    public var model: String
    /// The profiles the name can mean, oldest first; never empty.
    public var candidates: [DeviceProfile]

    /// The profiles `model` can mean; nil for a model CastPrep has no profile for.
    public init?(model: String) {
        let folded = model.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        let ids: [String]
        switch folded {
        case "chromecast":
            ids = ["chromecast-gen1-2", "chromecast-gen3", "google-tv-hd", "google-tv-4k"]
        case "chromecast ultra": ids = ["chromecast-ultra"]
        case "chromecast hd": ids = ["google-tv-hd"]
        case "google tv streamer": ids = ["google-tv-streamer"]
        case "google nest hub", "google home hub", "nest hub": ids = ["nest-hub"]
        case "google nest hub max", "nest hub max": ids = ["nest-hub-max"]
        case "google home", "google home mini", "google nest mini", "google home max", "nest audio",
            "google nest audio", "chromecast audio",
            "google cast group", "nest wifi point":
            ids = ["audio"]
        default:
            guard let profile = DeviceProfile.all.first(where: { $0.id == folded || $0.name.lowercased() == folded })
            else { return nil }
            ids = [profile.id]
        }
        self.model = model
        candidates = DeviceProfile.select(ids).profiles
        if candidates.isEmpty { return nil }
    }

    /// The verdict that decides whether to send `probe`: it will not play only when no
    /// candidate plays it. Of several, the newest candidate's verdict is given, since what
    /// stops even that one stops them all; otherwise the first candidate that plays it.
    public func verdict(for probe: ProbeResult, judge: DeviceJudge = DeviceJudge()) -> DeviceVerdict {
        let verdicts = candidates.map { judge.verdict(for: probe, on: $0) }
        if let playing = verdicts.first(where: { $0.outcome != .willNotPlay }) { return playing }
        return verdicts[verdicts.count - 1]
    }

    /// "Chromecast Ultra", or "Chromecast (1st to 3rd gen, or with Google TV)" for a shared name.
    public var description: String {
        candidates.count == 1
            ? candidates[0].name : "\(model) (any of: \(candidates.map(\.name).joined(separator: "; ")))"
    }
}
