import CastModel

/// The Info.plist rules of `castprep ios check` for one file, and the members `--fix` sets.
struct InfoPlistRules {
    var path: String
    var plist: ParsedPlist
    /// Receiver IDs in upper case, from `--app-id` or the sources; empty when unknown.
    var expectedIDs: [String]
    var idsFromOption: Bool

    struct Result {
        var findings: [Diagnostic] = []
        var changes: [PropertyListEntry] = []
        var fixedCodes: [DiagnosticCode] = []
    }

    static let bonjourKey = "NSBonjourServices"
    static let localNetworkKey = "NSLocalNetworkUsageDescription"
    static let genericService = "_googlecast._tcp"

    func run() -> Result {
        var result = Result()
        bonjour(into: &result)
        localNetwork(into: &result)
        return result
    }

    private func location(_ key: String) -> Diagnostic.SourceLocation {
        .init(file: path, line: plist.layout?.member(key)?.keyLine)
    }

    private func elementLocation(_ key: String, _ index: Int, count: Int) -> Diagnostic.SourceLocation {
        guard let elements = plist.layout?.member(key)?.elements, elements.count == count else { return location(key) }
        return .init(file: path, line: elements[index].line)
    }

    private var idSource: String { idsFromOption ? "--app-id" : "the sources' GCKDiscoveryCriteria" }

    /// The XML of a member, indented for a fix line.
    static func snippet(_ key: String, _ value: PropertyListValue) -> String {
        var lines = ["<key>\(XMLPlistLayout.escape(key))</key>"]
        switch value {
        case .array(let elements):
            lines.append("<array>")
            for element in elements {
                lines.append("\t<string>\(XMLPlistLayout.escape(element.stringValue ?? ""))</string>")
            }
            lines.append("</array>")
        default:
            lines.append("<string>\(XMLPlistLayout.escape(value.stringValue ?? ""))</string>")
        }
        return lines.map { "        " + $0 }.joined(separator: "\n")
    }

    // MARK: - NSBonjourServices

    private func bonjour(into result: inout Result) {
        let current = plist.value[Self.bonjourKey]
        let strings = current?.arrayValue?.compactMap(\.stringValue)
        var codes: [DiagnosticCode] = []
        var presentIDs: [String] = []
        var others: [String] = []
        var hasGeneric = false
        var mismatched: [String] = []

        if current == nil {
            codes.append(IOSCheckCode.bonjourServicesMissing)
        } else if strings == nil || strings?.count != current?.arrayValue?.count {
            codes.append(IOSCheckCode.bonjourServicesInvalid)
            result.findings.append(
                Diagnostic(
                    .error, IOSCheckCode.bonjourServicesInvalid,
                    "\(Self.bonjourKey) must be an array of strings, not a \(current?.typeName ?? "value") with other values",
                    fix: "replace it with:\n" + Self.snippet(Self.bonjourKey, desired(others: [], presentIDs: [])),
                    location: location(Self.bonjourKey)))
        }
        let entries = strings ?? []
        for (index, entry) in entries.enumerated() {
            guard entry.lowercased().contains("googlecast") else {
                others.append(entry)
                continue
            }
            let at = elementLocation(Self.bonjourKey, index, count: entries.count)
            let parts = entry.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts == ["_googlecast", "_tcp"] {
                hasGeneric = true
            } else if parts == ["_googlecast", "_udp"] {
                codes.append(IOSCheckCode.bonjourProtocolWrong)
                result.findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bonjourProtocolWrong,
                        "'\(entry)' names UDP; Cast devices advertise over TCP, so iOS allows no browsing for them",
                        fix: "write it as \(Self.genericService)", location: at))
            } else if parts.count == 3, parts[0].hasPrefix("_"), parts[0].count > 1, parts[1] == "_googlecast" {
                let id = String(parts[0].dropFirst())
                if parts[2] == "_udp" {
                    codes.append(IOSCheckCode.bonjourProtocolWrong)
                    result.findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.bonjourProtocolWrong,
                            "'\(entry)' names UDP; Cast devices advertise over TCP, so iOS allows no browsing for them",
                            fix: "write it as _\(id.uppercased())._googlecast._tcp", location: at))
                } else if parts[2] != "_tcp" {
                    codes.append(IOSCheckCode.bonjourEntryMalformed)
                    result.findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.bonjourEntryMalformed,
                            "'\(entry)' is not a Bonjour service type (it must end in ._tcp)",
                            fix: "write it as _\(id.uppercased())._googlecast._tcp", location: at))
                }
                if !AppIDReference.isHexadecimal(id) {
                    codes.append(IOSCheckCode.appIDMalformed)
                    result.findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.appIDMalformed,
                            "'\(entry)' holds '\(id)', which is not an 8-digit hexadecimal receiver application ID",
                            fix:
                                "use _<APPID>._googlecast._tcp with the ID from the Cast SDK Developer Console (\(SourceFacts.defaultReceiverID) for the Default Media Receiver)",
                            location: at))
                    continue
                }
                if !AppIDReference.isWellFormed(id) {
                    codes.append(IOSCheckCode.appIDMalformed)
                    result.findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.appIDMalformed, "'\(entry)' writes the application ID in lower case",
                            fix: "write it as _\(id.uppercased())._googlecast._tcp", location: at))
                }
                let normalized = id.uppercased()
                if !expectedIDs.isEmpty, !expectedIDs.contains(normalized) {
                    codes.append(IOSCheckCode.appIDMismatch)
                    mismatched.append(normalized)
                    result.findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.appIDMismatch,
                            "'\(entry)' is for receiver \(normalized), but \(idSource) use\(idsFromOption ? "s" : "") \(expectedIDs.joined(separator: ", ")): iOS lets the app browse only for the types listed",
                            fix: "list the receiver the app discovers: "
                                + expectedIDs.map { "_\($0)._googlecast._tcp" }.joined(separator: ", "),
                            location: at))
                } else if !presentIDs.contains(normalized) {
                    presentIDs.append(normalized)
                }
            } else {
                codes.append(IOSCheckCode.bonjourEntryMalformed)
                result.findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bonjourEntryMalformed,
                        "'\(entry)' is not a Cast service type (\(Self.genericService) or _<APPID>._googlecast._tcp)",
                        fix: "write \(Self.genericService) and _<APPID>._googlecast._tcp", location: at))
            }
        }

        let wanted = desired(others: others, presentIDs: presentIDs)
        let wantedXML = Self.snippet(Self.bonjourKey, wanted)
        if current == nil {
            let missingID =
                expectedIDs.isEmpty
                ? " (and _<APPID>._googlecast._tcp for the app's receiver: pass --app-id ID to have it filled in)" : ""
            result.findings.append(
                Diagnostic(
                    .error, IOSCheckCode.bonjourServicesMissing,
                    "the Info.plist has no \(Self.bonjourKey): since iOS 14 the app may browse only for the Bonjour types listed there, so it finds no Cast device",
                    fix: "add to Info.plist\(missingID):\n" + wantedXML, location: .init(file: path)))
        } else if strings != nil {
            if !hasGeneric {
                codes.append(IOSCheckCode.bonjourGooglecastMissing)
                result.findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bonjourGooglecastMissing,
                        "\(Self.bonjourKey) lacks \(Self.genericService), which the Cast SDK browses for every device",
                        fix: "add <string>\(Self.genericService)</string> to the array:\n" + wantedXML,
                        location: location(Self.bonjourKey)))
            }
            let missing = expectedIDs.filter { !presentIDs.contains($0) }
            if expectedIDs.isEmpty, presentIDs.isEmpty, !codes.contains(IOSCheckCode.appIDMalformed) {
                result.findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bonjourAppIDMissing,
                        "\(Self.bonjourKey) lists no _<APPID>._googlecast._tcp for the app's receiver, which the SDK browses for",
                        fix:
                            "add <string>_<APPID>._googlecast._tcp</string> with the ID of GCKDiscoveryCriteria (\(SourceFacts.defaultReceiverID) for the Default Media Receiver), or pass --app-id ID and use --fix",
                        location: location(Self.bonjourKey)))
            } else if !missing.isEmpty, mismatched.isEmpty {
                codes.append(IOSCheckCode.bonjourAppIDMissing)
                let listed = missing.map { "_\($0)._googlecast._tcp" }.joined(separator: ", ")
                result.findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bonjourAppIDMissing,
                        "\(Self.bonjourKey) lacks \(listed) for the receiver of \(idSource): iOS 14 does not let the SDK browse for it",
                        fix: "add to the array:\n" + wantedXML, location: location(Self.bonjourKey)))
            }
        }
        if current == nil || wanted.arrayValue?.compactMap(\.stringValue) != entries || strings == nil {
            result.changes.append(PropertyListEntry(key: Self.bonjourKey, value: wanted))
            result.fixedCodes += codes
        }
    }

    /// The array `--fix` writes: the non-Cast entries kept, then `_googlecast._tcp` and one
    /// entry per receiver ID (the expected ones, or those already listed when none is known).
    private func desired(others: [String], presentIDs: [String]) -> PropertyListValue {
        let ids = expectedIDs.isEmpty ? presentIDs : expectedIDs
        let entries = others + [Self.genericService] + ids.map { "_\($0)._googlecast._tcp" }
        return .array(entries.map { .string($0) })
    }

    // MARK: - NSLocalNetworkUsageDescription

    private func localNetwork(into result: inout Result) {
        let suggested = Self.snippet(Self.localNetworkKey, .string(IOSAppChecker.recommendedLocalNetworkText))
        guard let value = plist.value[Self.localNetworkKey] else {
            result.findings.append(
                Diagnostic(
                    .error, IOSCheckCode.localNetworkUsageMissing,
                    "the Info.plist has no \(Self.localNetworkKey): the local-network prompt then shows no reason, and the Cast documentation requires it",
                    fix: "add to Info.plist:\n" + suggested, location: .init(file: path)))
            result.changes.append(
                PropertyListEntry(key: Self.localNetworkKey, value: .string(IOSAppChecker.recommendedLocalNetworkText)))
            result.fixedCodes.append(IOSCheckCode.localNetworkUsageMissing)
            return
        }
        guard let text = value.stringValue else {
            result.findings.append(
                Diagnostic(
                    .error, IOSCheckCode.localNetworkUsageMissing,
                    "\(Self.localNetworkKey) is a \(value.typeName), not a string",
                    fix: "replace it with:\n" + suggested, location: location(Self.localNetworkKey)))
            result.changes.append(
                PropertyListEntry(key: Self.localNetworkKey, value: .string(IOSAppChecker.recommendedLocalNetworkText)))
            result.fixedCodes.append(IOSCheckCode.localNetworkUsageMissing)
            return
        }
        if Self.isPlaceholder(text) {
            result.findings.append(
                Diagnostic(
                    .warning, IOSCheckCode.localNetworkUsageEmpty,
                    text.trimmingCharactersInSet(" \t\n").isEmpty
                        ? "\(Self.localNetworkKey) is empty" : "\(Self.localNetworkKey) is a placeholder: '\(text)'",
                    fix: "say why the app uses the local network:\n" + suggested,
                    location: location(Self.localNetworkKey)))
            result.changes.append(
                PropertyListEntry(key: Self.localNetworkKey, value: .string(IOSAppChecker.recommendedLocalNetworkText)))
            result.fixedCodes.append(IOSCheckCode.localNetworkUsageEmpty)
        } else if !Self.namesCast(text) {
            // The app's own words: reported, never rewritten.
            result.findings.append(
                Diagnostic(
                    .warning, IOSCheckCode.localNetworkUsageGeneric,
                    "\(Self.localNetworkKey) does not say the local network is used to find Cast devices: '\(text)'",
                    fix:
                        "the Cast documentation recommends an app-specific text such as: \(IOSAppChecker.recommendedLocalNetworkText)",
                    location: location(Self.localNetworkKey)))
        }
    }

    static func isPlaceholder(_ text: String) -> Bool {
        let lower = text.trimmingCharactersInSet(" \t\n.").lowercased()
        let placeholders: Set<String> = [
            "", "todo", "tbd", "fixme", "xxx", "placeholder", "description", "usage description",
            "local network usage description",
            "nslocalnetworkusagedescription", "privacy - local network usage description", "test", "lorem ipsum",
        ]
        return placeholders.contains(lower) || lower.hasPrefix("todo") || lower.hasPrefix("lorem ipsum")
            || lower.count < 4
    }

    /// Whether the text mentions Cast (Chromecast, Google Cast, Cast-enabled), not merely "broadcast".
    static func namesCast(_ text: String) -> Bool {
        var lower = text.lowercased()
        for word in ["broadcast", "podcast", "forecast", "newscast", "webcast", "simulcast"] {
            while let range = lower.firstRange(of: word) { lower.replaceSubrange(range, with: " ") }
        }
        return lower.contains("cast")
    }
}
