public import CastDiscovery
public import CastModel

/// Why a device could not be located, as a ``Diagnostic`` with a stable code and a fix, plus
/// the devices that were found so a caller can list them.
///
/// Codes: `devices.unknown-name`, `devices.ambiguous-name`, `devices.choose-device`,
/// `devices.host-invalid`, `devices.device-and-host`, and the `discovery.*` codes of
/// ``CastDiscoveryError`` when discovery could not run or nothing answered.
public struct CastDeviceLocatorError: CodedError, Hashable {
    /// The finding, with its stable code, message and fix.
    public var diagnostic: Diagnostic
    /// Every device discovery found (for unknown, ambiguous or unchosen names), sorted by name.
    public var candidates: [CastDeviceRecord]
    /// What to try, most likely first, when nothing answered at all (empty otherwise).
    public var troubleshooting: [String]

    /// Creates an error.
    public init(_ diagnostic: Diagnostic, candidates: [CastDeviceRecord] = [], troubleshooting: [String] = []) {
        self.diagnostic = diagnostic
        self.candidates = candidates
        self.troubleshooting = troubleshooting
    }

    /// Wraps a discovery error (no interface, socket failure).
    public init(_ error: CastDiscoveryError) { self.init(error.diagnostic) }

    /// The stable code.
    public var code: DiagnosticCode { diagnostic.code }

    public var message: String { diagnostic.message }

    public var fix: String? { diagnostic.fix }
}

extension DiagnosticCode {
    /// `--device NAME` matched no discovered device by name, id or prefix.
    public static let devicesUnknownName: DiagnosticCode = "devices.unknown-name"
    /// `--device NAME` matched more than one device.
    public static let devicesAmbiguousName: DiagnosticCode = "devices.ambiguous-name"
    /// Several devices answered and none was named.
    public static let devicesChooseDevice: DiagnosticCode = "devices.choose-device"
    /// `--host` is not an address.
    public static let devicesHostInvalid: DiagnosticCode = "devices.host-invalid"
    /// Both `--device` and `--host` were given.
    public static let devicesDeviceAndHost: DiagnosticCode = "devices.device-and-host"
    /// A `--host` device answered neither CASTV2 nor HTTP.
    public static let devicesHostUnreachable: DiagnosticCode = "devices.host-unreachable"
    /// The CASTV2 port of a `--host` device refused or timed out, or sent no RECEIVER_STATUS.
    public static let devicesCastUnavailable: DiagnosticCode = "devices.cast-unavailable"
    /// `/setup/eureka_info` of a `--host` device did not answer, refused (403) or was not JSON.
    public static let devicesEurekaUnavailable: DiagnosticCode = "devices.eureka-unavailable"
}
