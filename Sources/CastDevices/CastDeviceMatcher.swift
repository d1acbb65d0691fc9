public import CastDiscovery
import CastModel

/// Picks the device a user meant by `--device NAME` among the devices discovery found.
///
/// The rules, in order, stop at the first that matches anything:
/// 1. the device id (32 hex digits, with or without the UUID hyphens, any case), or the `id`
///    TXT value exactly as advertised;
/// 2. the friendly name, ignoring case and surrounding spaces;
/// 3. a prefix of the friendly name, ignoring case (`liv` for "Living Room TV");
/// 4. a prefix of the id, at least 4 hex digits (what `castprep devices` shows is enough to type).
///
/// A rule that matches two devices is ambiguous, and later rules are not tried: two devices
/// both called "TV" must be told apart by id, not by whichever a later rule happens to pick.
///
/// ```swift
/// switch CastDeviceMatcher.match("living", in: devices) {
/// case .found(let device): print(device.preferredAddress ?? "")
/// case .ambiguous(let devices): print("which one?", devices.map(\.displayName))
/// case .none: print("no such device")
/// }
/// ```
public enum CastDeviceMatcher {
    /// The outcome of matching one name.
    public enum Match: Sendable, Hashable {
        /// Exactly one device matched.
        case found(CastDeviceRecord, by: Rule)
        /// Several devices matched the same rule; they are listed sorted by name.
        case ambiguous([CastDeviceRecord], by: Rule)
        /// Nothing matched.
        case none
    }

    /// Which rule matched.
    public enum Rule: String, Sendable, Hashable {
        /// The device id.
        case id
        /// The whole friendly name, ignoring case.
        case name
        /// The start of the friendly name, ignoring case.
        case namePrefix = "name-prefix"
        /// The start of the id.
        case idPrefix = "id-prefix"
    }

    /// The shortest id prefix accepted: shorter ones would match by accident.
    public static let minimumIDPrefix = 4

    /// Matches `query` against `devices` by the rules above.
    public static func match(_ query: String, in devices: [CastDeviceRecord]) -> Match {
        let wanted = fold(query)
        guard !wanted.isEmpty else { return .none }
        let queryID = CastDeviceID(wanted)
        let byID = devices.filter { device in
            (queryID != nil && device.id == queryID) || device.rawID.map(fold) == wanted
        }
        if let match = decide(byID, .id) { return match }
        if let match = decide(devices.filter { device in device.friendlyName.map(fold) == wanted }, .name) {
            return match
        }
        if let match = decide(
            devices.filter { device in device.friendlyName.map(fold)?.hasPrefix(wanted) == true }, .namePrefix)
        {
            return match
        }
        let hexPrefix = wanted.replacing("-", with: "")
        if hexPrefix.count >= minimumIDPrefix, hexPrefix.allSatisfy(\.isHexDigit) {
            if let match = decide(devices.filter { $0.id?.hex.hasPrefix(hexPrefix) == true }, .idPrefix) {
                return match
            }
        }
        return .none
    }

    private static func decide(_ matches: [CastDeviceRecord], _ rule: Rule) -> Match? {
        switch matches.count {
        case 0: nil
        case 1: .found(matches[0], by: rule)
        default: .ambiguous(matches.sorted(by: CastDeviceRecord.displayOrder), by: rule)
        }
    }

    /// Lower-cased with surrounding white space removed: names are typed by people.
    public static func fold(_ text: String) -> String {
        String(text.lowercased().drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension CastDeviceRecord {
    /// Sorts by shown name ignoring case, then by id and instance, so listings are stable.
    public static func displayOrder(_ lhs: CastDeviceRecord, _ rhs: CastDeviceRecord) -> Bool {
        let left = (lhs.displayName.lowercased(), lhs.id?.hex ?? "", lhs.instanceName)
        let right = (rhs.displayName.lowercased(), rhs.id?.hex ?? "", rhs.instanceName)
        return left < right
    }
}
