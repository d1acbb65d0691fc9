import CastModel
import Foundation
import JSONSupport

/// Reads which Cast SDK version a package manager's files pin.
enum CastSDKReaders {
    static let textLimit = 8 << 20

    /// Whether a pod, package or Cartfile source name is the Cast SDK.
    static func isCastSDK(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.contains("google-cast-sdk") || lower.contains("googlecastsdk") || lower.contains("google-cast-ios")
    }

    /// Whether the name says the variant has no Bluetooth; nil when it names no variant.
    static func includesBluetooth(_ name: String) -> Bool {
        let lower = name.lowercased().replacingOccurrences(of: "_", with: "-")
        return !(lower.contains("no-bluetooth") || lower.contains("nobluetooth"))
    }

    /// `PODS:` entries of a Podfile.lock: `  - google-cast-sdk (4.7.1):`.
    static func podfileLock(_ text: String, path: String) -> CastSDKDependency? {
        var inPods = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if !line.hasPrefix(" ") { inPods = line.hasPrefix("PODS:") }
            guard inPods else { continue }
            let trimmed = line.trimmingCharactersInSet(" \t\r")
            // Only top-level pods ("  - name (version)"), not their dependency lists.
            guard line.hasPrefix("  - "), trimmed.hasPrefix("- ") else { continue }
            let entry = trimmed.dropFirst(2).trimmingCharactersInSet(":\"")
            guard let open = entry.firstIndex(of: "("), let close = entry.lastIndex(of: ")"), open < close else {
                continue
            }
            let fullName = entry[..<open].trimmingCharactersInSet(" ")
            let pod = String(fullName.split(separator: "/").first ?? "")
            guard isCastSDK(pod) else { continue }
            let versionText = String(entry[entry.index(after: open)..<close])
            return CastSDKDependency(
                manager: .cocoapods, name: pod, version: SemanticVersion(versionText), requirement: nil,
                includesBluetooth: includesBluetooth(pod), source: nil,
                location: .init(file: path, line: number + 1))
        }
        return nil
    }

    /// `pod 'google-cast-sdk', '~> 4.5.0'` in a Podfile (used only without its lock).
    static func podfile(_ text: String, path: String) -> CastSDKDependency? {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharactersInSet(" \t\r")
            guard trimmed.hasPrefix("pod ") || trimmed.hasPrefix("pod(") else { continue }
            let quoted = quotedStrings(in: trimmed)
            guard let pod = quoted.first.map({ String($0.split(separator: "/").first ?? "") }), isCastSDK(pod) else {
                continue
            }
            let requirement = quoted.count > 1 ? quoted[1] : nil
            let version = requirement.flatMap { text in
                SemanticVersion(String(text.drop { !$0.isNumber }))
            }
            return CastSDKDependency(
                manager: .cocoapods, name: pod, version: version, requirement: requirement ?? "",
                includesBluetooth: includesBluetooth(pod), source: nil, location: .init(file: path, line: number + 1))
        }
        return nil
    }

    /// SwiftPM's Package.resolved, version 1 (`object.pins[].repositoryURL`) or 2 and 3 (`pins[].location`).
    static func packageResolved(_ bytes: [UInt8], path: String) -> CastSDKDependency? {
        guard let document = try? JSONParser(limits: .init(maxDepth: 32)).parse(bytes) else { return nil }
        let pins = document.value["pins"]?.arrayValue ?? document.value["object"]?["pins"]?.arrayValue ?? []
        let text = String(decoding: bytes, as: UTF8.self)
        for pin in pins {
            let identity = pin["identity"]?.stringValue ?? pin["package"]?.stringValue ?? ""
            let location = pin["location"]?.stringValue ?? pin["repositoryURL"]?.stringValue ?? ""
            guard isCastSDK(identity) || isCastSDK(location) else { continue }
            let versionText = pin["state"]?["version"]?.stringValue
            // The line of the pin's location (or identity) in the file.
            let needle = location.isEmpty ? identity : location
            var line: Int?
            for (number, content) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where content.contains(needle) {
                line = number + 1
                break
            }
            let name = identity.isEmpty ? location : identity
            return CastSDKDependency(
                manager: .swiftPackageManager, name: name, version: versionText.flatMap(SemanticVersion.init),
                requirement: nil,
                includesBluetooth: isNamedVariant(name + " " + location)
                    ? includesBluetooth(name + " " + location) : nil,
                source: location.isEmpty ? nil : location, location: .init(file: path, line: line))
        }
        return nil
    }

    /// Cartfile.resolved: `binary "URL" "4.7.1"` or `github "owner/repo" "v4.7.1"`.
    static func cartfileResolved(_ text: String, path: String) -> CastSDKDependency? {
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let quoted = quotedStrings(in: String(line))
            guard quoted.count >= 2, isCastSDK(quoted[0]) || quoted[0].contains("GoogleCast") else { continue }
            return CastSDKDependency(
                manager: .carthage, name: quoted[0], version: SemanticVersion(quoted[1]), requirement: nil,
                includesBluetooth: includesBluetooth(quoted[0]), source: quoted[0],
                location: .init(file: path, line: number + 1))
        }
        return nil
    }

    /// Whether a name says which variant it is (SwiftPM packages often do not).
    private static func isNamedVariant(_ name: String) -> Bool {
        name.lowercased().contains("bluetooth")
    }

    /// The contents of each '…' or "…" in `line`, in order.
    static func quotedStrings(in line: String) -> [String] {
        var result: [String] = []
        var current: String?
        var quote: Character = "\""
        for character in line {
            if var text = current {
                if character == quote {
                    result.append(text)
                    current = nil
                } else {
                    text.append(character)
                    current = text
                }
            } else if character == "\"" || character == "'" {
                quote = character
                current = ""
            } else if character == "#" {
                break  // a comment in Ruby and Cartfiles
            }
        }
        return result
    }
}
