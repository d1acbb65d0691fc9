import JSONSupport

extension CastDeviceConfig {
    /// Whether `castprep remote` has shown its introductory overlay of the keys, so that it shows
    /// it once, as the Cast SDK's introductory overlay does. Kept in the file's `remote` member:
    /// `"remote": {"introductionShown": true}`.
    public var remoteIntroductionShown: Bool {
        get { otherMembers["remote"]?["introductionShown"]?.boolValue ?? false }
        set {
            var remote = otherMembers["remote"]?.objectValue ?? [:]
            remote["introductionShown"] = .bool(newValue)
            otherMembers["remote"] = .object(remote)
        }
    }
}
