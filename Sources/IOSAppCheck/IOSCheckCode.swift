public import CastModel

/// The stable codes of `castprep ios check`'s findings.
public enum IOSCheckCode {
    // Input
    public static let pathNotFound: DiagnosticCode = "ios.path-not-found"
    public static let infoPlistNotFound: DiagnosticCode = "ios.info-plist-not-found"
    public static let infoPlistUnreadable: DiagnosticCode = "ios.info-plist-unreadable"
    public static let infoPlistTooLarge: DiagnosticCode = "ios.info-plist-too-large"
    public static let infoPlistNotDictionary: DiagnosticCode = "ios.info-plist-not-dictionary"
    public static let plistLibraryMissing: DiagnosticCode = "ios.plist-library-missing"
    public static let projectTooLarge: DiagnosticCode = "ios.project-too-large"
    // NSBonjourServices
    public static let bonjourServicesMissing: DiagnosticCode = "ios.bonjour-services-missing"
    public static let bonjourServicesInvalid: DiagnosticCode = "ios.bonjour-services-invalid"
    public static let bonjourGooglecastMissing: DiagnosticCode = "ios.bonjour-googlecast-missing"
    public static let bonjourAppIDMissing: DiagnosticCode = "ios.bonjour-app-id-missing"
    public static let bonjourProtocolWrong: DiagnosticCode = "ios.bonjour-protocol-wrong"
    public static let bonjourEntryMalformed: DiagnosticCode = "ios.bonjour-entry-malformed"
    // Application ID
    public static let appIDMismatch: DiagnosticCode = "ios.app-id-mismatch"
    public static let appIDMalformed: DiagnosticCode = "ios.app-id-malformed"
    public static let appIDUnresolved: DiagnosticCode = "ios.app-id-unresolved"
    // NSLocalNetworkUsageDescription
    public static let localNetworkUsageMissing: DiagnosticCode = "ios.local-network-usage-missing"
    public static let localNetworkUsageEmpty: DiagnosticCode = "ios.local-network-usage-empty"
    public static let localNetworkUsageGeneric: DiagnosticCode = "ios.local-network-usage-generic"
    // Cast SDK
    public static let castSDKTooOld: DiagnosticCode = "ios.cast-sdk-too-old"
    public static let castSDKNotRecommended: DiagnosticCode = "ios.cast-sdk-not-recommended"
    public static let castSDKNotFound: DiagnosticCode = "ios.cast-sdk-not-found"
    public static let castSDKVersionUnknown: DiagnosticCode = "ios.cast-sdk-version-unknown"
    public static let bluetoothUsageMissing: DiagnosticCode = "ios.bluetooth-usage-missing"
    // Discovery
    public static let discoveryNotStarted: DiagnosticCode = "ios.discovery-not-started"
    public static let discoveryExplanationMissing: DiagnosticCode = "ios.discovery-explanation-missing"
    // --fix
    public static let fixNotVerified: DiagnosticCode = "ios.fix-not-verified"
    public static let fixWriteFailed: DiagnosticCode = "ios.fix-write-failed"
    public static let fixAppBundle: DiagnosticCode = "ios.fix-app-bundle"
}
