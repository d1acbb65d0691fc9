import CastModel
import Foundation

/// A device volume as people type it, for `castprep control volume` and `castprep cast --volume`.
///
/// - `40` and `40%` are percent (`1` is 1%, never 100%);
/// - `0.4` (a fraction from 0 to 1 written with a decimal point) is the level itself;
/// - `+10` and `-10` (or `+10%`) move the level by that many percent;
/// - `up` and `down` move it by the device's step (`volume.stepInterval` in RECEIVER_STATUS,
///   0.05 when the device does not say).
///
/// Relative changes are clamped to 0–100%; an absolute level over 100% is refused, since it is
/// a typing slip rather than a wish.
public enum VolumeSetting: Sendable, Hashable, CustomStringConvertible {
    /// A level from 0 to 1.
    case level(Double)
    /// A change by this much (−1…1).
    case relative(Double)
    /// One of the device's steps up (`true`) or down.
    case step(up: Bool)

    /// The step used when the device does not report `stepInterval`.
    public static let defaultStep = 0.05

    /// How the syntax is shown in help and errors.
    public static let syntax =
        "40 or 40% (percent), 0.4 (fraction), +10/-10 (percent more or less), up/down (one device step)"

    /// Reads `text`.
    ///
    /// - Throws: ``CastingError`` `cast.volume-invalid` for anything else, or an absolute level
    ///   over 100%.
    public init(parsing text: String) throws(CastingError) {
        var body = text.trimmingCharacters(in: .whitespaces).lowercased()
        let invalid = CastingError(
            "cast.volume-invalid", "'\(text.prefix(40))' is not a volume", fix: "use \(Self.syntax)")
        switch body {
        case "up", "+":
            self = .step(up: true)
            return
        case "down", "-":
            self = .step(up: false)
            return
        default: break
        }
        guard !body.isEmpty, body.utf8.count <= 16 else { throw invalid }
        var sign: Double?
        if body.hasPrefix("+") {
            sign = 1
            body.removeFirst()
        } else if body.hasPrefix("-") {
            sign = -1
            body.removeFirst()
        }
        let percentSign = body.hasSuffix("%")
        if percentSign { body.removeLast() }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            body.filter({ $0 == "." }).count <= 1,
            let number = Double(body), number.isFinite
        else { throw invalid }
        if let sign {
            self = .relative(sign * number / 100)
            return
        }
        // A decimal point with a value up to 1 is the fraction itself; every other number is percent.
        let fraction = !percentSign && body.contains(".") && number <= 1 ? number : number / 100
        guard fraction <= 1 else {
            throw CastingError(
                "cast.volume-invalid", "volume \(text.prefix(40)) is over 100%",
                fix: "use a level from 0 to 100 (\(Self.syntax))")
        }
        self = .level(fraction)
    }

    /// The level to set, 0…1, from the device's current level and step.
    ///
    /// - Parameters:
    ///   - current: The device's level now; 0 when unknown.
    ///   - stepInterval: The device's `stepInterval`; ``defaultStep`` when nil or not in (0, 1].
    public func level(from current: Double?, stepInterval: Double?) -> Double {
        let now = current.map { min(max($0, 0), 1) } ?? 0
        let step = stepInterval.flatMap { $0 > 0 && $0 <= 1 ? $0 : nil } ?? Self.defaultStep
        let target: Double =
            switch self {
            case .level(let level): level
            case .relative(let change): now + change
            case .step(let up): now + (up ? step : -step)
            }
        // Rounded to 1/1000 so that 0.3 + 0.05 is 0.35, not 0.35000000000000003.
        return (min(max(target, 0), 1) * 1000).rounded() / 1000
    }

    public var description: String {
        switch self {
        case .level(let level): "\(Int((level * 100).rounded()))%"
        case .relative(let change): (change < 0 ? "-" : "+") + "\(abs((change * 1000).rounded() / 10))%"
        case .step(let up): up ? "up" : "down"
        }
    }
}
