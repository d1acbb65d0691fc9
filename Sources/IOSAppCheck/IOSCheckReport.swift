public import CastModel

/// What `castprep ios check` found in one iOS sender app.
public struct IOSCheckReport: Sendable {
    /// What PATH named.
    public enum InputKind: String, Sendable, Hashable, Codable {
        /// One Info.plist file.
        case infoPlist = "info-plist"
        /// A built `.app` bundle.
        case appBundle = "app-bundle"
        /// A project folder: app targets' Info.plist files, dependency files, sources.
        case project
    }

    /// The path that was checked, as given.
    public var path: String
    public var kind: InputKind
    /// The app targets' Info.plist files that were read, with what `--fix` would change.
    public var infoPlists: [CheckedInfoPlist]
    /// The receiver application IDs the app uses: `--app-id`, or found in the sources.
    public var appIDs: [AppIDReference]
    /// The Cast SDK dependency, when one was found.
    public var sdk: CastSDKDependency?
    /// Every finding, in a stable order.
    public var findings: [Diagnostic]

    /// Whether an error-level finding exists (the exit status is then 1).
    public var hasErrors: Bool { findings.containsErrors }
}

/// One Info.plist that was read.
public struct CheckedInfoPlist: Sendable, Hashable {
    public var path: String
    public var format: PropertyListFormat
    /// The top-level members `--fix` sets (replaced where they are, added otherwise), in order.
    public var changes: [PropertyListEntry]
    /// The codes of the findings those changes fix.
    public var fixedCodes: [DiagnosticCode]
}

/// A receiver application ID the app discovers devices for.
public struct AppIDReference: Sendable, Hashable {
    /// Where the ID came from.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// `--app-id`.
        case option
        /// A `GCKDiscoveryCriteria` in the sources.
        case source
    }

    /// The ID as written (`CC1AD845`); ``normalized`` is the form Bonjour entries use.
    public var id: String
    public var origin: Origin
    public var location: Diagnostic.SourceLocation?

    /// The ID in upper case.
    public var normalized: String { id.uppercased() }

    /// Whether the ID is 8 upper-case hexadecimal digits, as the Cast console issues them.
    public var isWellFormed: Bool { AppIDReference.isWellFormed(id) }

    /// Whether `text` is 8 upper-case hexadecimal digits.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 8 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }
    }

    /// Whether `text` is 8 hexadecimal digits in any case.
    public static func isHexadecimal(_ text: String) -> Bool {
        text.utf8.count == 8
            && text.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0)
            }
    }
}

/// The Cast SDK as the app's package manager pins it.
public struct CastSDKDependency: Sendable, Hashable {
    /// Which package manager (or the built bundle) it was found in.
    public enum Manager: String, Sendable, Hashable, Codable {
        case cocoapods
        case swiftPackageManager = "swiftpm"
        case carthage
        /// `Frameworks/GoogleCast.framework` inside a built `.app`.
        case bundle
    }

    public var manager: Manager
    /// The pod, package identity or Cartfile source.
    public var name: String
    /// The version: exact from a lock file, the lower bound of a Podfile requirement, nil when unknown.
    public var version: SemanticVersion?
    /// The requirement as written, when the version comes from a Podfile rather than its lock.
    public var requirement: String?
    /// Whether this variant includes Bluetooth (guest mode); nil when the name does not say.
    public var includesBluetooth: Bool?
    /// The package's URL (SwiftPM location, Carthage binary or repository).
    public var source: String?
    public var location: Diagnostic.SourceLocation

    /// The line that pins `version` for this package manager.
    public func upgradeLine(to version: SemanticVersion) -> String {
        switch manager {
        case .cocoapods:
            "pod '\(name)', '~> \(version)' (in the Podfile), then: pod update \(name)"
        case .swiftPackageManager:
            "set the package's rule to \"Up to Next Major Version\" from \(version) (Package.swift: .package(url: \"\(source ?? name)\", from: \"\(version)\")), then resolve packages again"
        case .carthage:
            "binary \"\(source ?? "<the Cast SDK's Carthage JSON URL>")\" ~> \(version) (in the Cartfile), then: carthage update"
        case .bundle:
            "build the app with Cast SDK \(version) or later: pod 'google-cast-sdk', '~> \(version)' (CocoaPods), or the same version through SwiftPM or Carthage"
        }
    }
}

/// A `major.minor.patch` version; missing parts are 0.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Reads `4.8.3`, `v4.8`, `4.8.3-beta`; nil for anything else.
    public init?(_ text: String) {
        var digits = Substring(text.trimmingCharactersInSet(" \"'"))
        if digits.first == "v" || digits.first == "V" { digits = digits.dropFirst() }
        let core = digits.prefix { $0.isNumber || $0 == "." }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 6 }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == parts.count else { return nil }
        self.init(numbers[0], numbers.count > 1 ? numbers[1] : 0, numbers.count > 2 ? numbers[2] : 0)
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// The oldest SDK that discovers devices on iOS 14 when built with Xcode 12 or later.
    public static let minimumForIOS14 = SemanticVersion(4, 6, 0)
    /// The version the Cast documentation recommends releasing with.
    public static let recommended = SemanticVersion(4, 8, 3)
}

extension StringProtocol {
    /// The string without leading and trailing characters from `set`.
    func trimmingCharactersInSet(_ set: String) -> String {
        let characters = Set(set)
        var text = Substring(String(self))
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
