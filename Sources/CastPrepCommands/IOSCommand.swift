import CastModel
import CommandParsing
import IOSAppCheck
import JSONSupport
import SystemIO

/// `castprep ios check PATH`: the iOS sender app's Info.plist, Cast SDK and discovery code,
/// checked against what iOS 14+ local-network discovery needs.
enum IOSCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "ios", abstract: "Check an iOS sender app for what Cast discovery on iOS 14 and later needs.",
            subcommands: [checkSpec],
            examples: checkExamples)
    }

    static var checkSpec: CommandSpec {
        CommandSpec(
            name: "check",
            abstract: "Check an iOS app's Info.plist, Cast SDK version and device discovery code.",
            discussion: """
                Since iOS 14 an app that browses the local network without the right Info.plist entries finds no Cast \
                device. PATH is an Info.plist (XML or binary), a built .app bundle, or the app's project folder, where \
                the app targets' Info.plist files, Podfile.lock (or Podfile), Package.resolved, Cartfile.resolved and \
                the Swift and Objective-C sources are read. Checks: NSBonjourServices lists _googlecast._tcp and \
                _<APPID>._googlecast._tcp for the receiver of GCKDiscoveryCriteria (or --app-id); \
                NSLocalNetworkUsageDescription says why; the Cast SDK is 4.6.0 or later (4.8.3 recommended); the \
                Bluetooth variant has NSBluetoothAlwaysUsageDescription; a custom device picker calls startDiscovery.

                --fix writes the missing Info.plist entries in the file's own format (XML stays XML, binary stays \
                binary), changing nothing else, keeps the original as Info.plist.orig, and checks again. A file that \
                does not read back identically is not written. Exit status 1 when an error-level finding remains.
                """,
            options: [
                .option(
                    "app-id", valueName: "id",
                    help: "The receiver application ID (8 hexadecimal digits) instead of the one in the sources."),
                .flag("fix", help: "Write the missing Info.plist entries (the original is kept as .orig)."),
                .flag("json", help: "Print one JSON document with every finding."),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "path", help: "An Info.plist, a .app bundle or the app's project folder.")],
            examples: checkExamples,
            run: { values, io in try await check(values, io: io) })
    }

    static func check(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        guard let path = values.arguments("path").first else {
            throw values.usageError("name an Info.plist, a .app bundle or a project folder")
        }
        let appID = values.option("app-id")
        if let appID, !AppIDReference.isHexadecimal(appID) {
            throw values.usageError(
                "'\(appID)' is not a receiver application ID: 8 hexadecimal digits such as CC1AD845",
                concerning: "app-id")
        }
        let fixing = values.flag("fix")
        let (first, fixes, final) = try await BlockingWork.run {
            () -> (IOSCheckReport, [InfoPlistFixResult], IOSCheckReport?) in
            let report = IOSAppChecker.check(path: path, appID: appID)
            guard fixing else { return (report, [], nil) }
            let fixes = InfoPlistFixer.apply(report)
            guard fixes.contains(where: \.isWritten) else { return (report, fixes, nil) }
            return (report, fixes, IOSAppChecker.check(path: path, appID: appID))
        }
        let report = final ?? first
        let findings = (report.findings + fixes.compactMap(\.refusal)).sortedForDisplay()
        if values.flag("json") {
            io.writeLine(JSONWriter.pretty.string(from: json(report, fixes: fixes, findings: findings)))
        } else {
            io.write(render(report, fixes: fixes))
        }
        DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values)).print(findings)
        let fixedCount = fixes.filter(\.isWritten).count
        let fixedText = fixing ? "; \(fixedCount) Info.plist file\(fixedCount == 1 ? "" : "s") fixed" : ""
        let what =
            findings.contains { $0.code == IOSCheckCode.pathNotFound }
            ? "nothing checked" : "checked (\(report.kind.rawValue))"
        io.writeErrorLine("castprep: \(path) \(what)\(fixedText); \(DiagnosticPrinter.tally(findings))")
        return findings.containsErrors ? 1 : 0
    }

    /// What was read, one line each, then what --fix wrote.
    static func render(_ report: IOSCheckReport, fixes: [InfoPlistFixResult]) -> String {
        var lines: [String] = []
        for plist in report.infoPlists {
            lines.append("Info.plist: \(plist.path) (\(plist.format.rawValue))")
        }
        for reference in report.appIDs {
            let origin = reference.origin == .option ? "--app-id" : reference.location?.description ?? "sources"
            lines.append("App ID:     \(reference.id) (\(origin))")
        }
        if let sdk = report.sdk {
            let version = sdk.version.map { "\($0)" } ?? "version unknown"
            lines.append("Cast SDK:   \(sdk.name) \(version) (\(sdk.manager.rawValue), \(sdk.location))")
        }
        for fix in fixes where fix.isWritten {
            lines.append(
                "Fixed:      \(fix.path): set \(fix.keys.joined(separator: ", ")); original kept as \(fix.backupPath ?? "")"
            )
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    static func json(_ report: IOSCheckReport, fixes: [InfoPlistFixResult], findings: [Diagnostic]) -> JSONValue {
        var document: [String: JSONValue] = [
            "path": .string(report.path),
            "kind": .string(report.kind.rawValue),
            "infoPlists": .array(
                report.infoPlists.map { plist in
                    [
                        "path": .string(plist.path), "format": .string(plist.format.rawValue),
                        "fixableKeys": .array(plist.changes.map { .string($0.key) }),
                    ]
                }),
            "appIds": .array(
                report.appIDs.map { reference in
                    var members: [String: JSONValue] = [
                        "id": .string(reference.id), "origin": .string(reference.origin.rawValue),
                    ]
                    if let location = reference.location { members["location"] = .string(location.description) }
                    return .object(members)
                }),
            "fixes": .array(
                fixes.map { fix in
                    var members: [String: JSONValue] = [
                        "path": .string(fix.path), "format": .string(fix.format.rawValue),
                        "keys": .array(fix.keys.map { .string($0) }),
                        "written": .bool(fix.isWritten),
                    ]
                    if let backup = fix.backupPath { members["backup"] = .string(backup) }
                    return .object(members)
                }),
            "diagnostics": .array(findings.map(DiagnosticJSON.encode)),
            "summary": [
                "errors": JSONValue(findings.filter { $0.severity == .error }.count),
                "warnings": JSONValue(findings.filter { $0.severity == .warning }.count),
                "notes": JSONValue(findings.filter { $0.severity == .note }.count),
            ],
        ]
        if let sdk = report.sdk {
            var members: [String: JSONValue] = [
                "manager": .string(sdk.manager.rawValue), "name": .string(sdk.name),
                "location": .string(sdk.location.description),
            ]
            if let version = sdk.version { members["version"] = .string(version.description) }
            if let requirement = sdk.requirement { members["requirement"] = .string(requirement) }
            if let bluetooth = sdk.includesBluetooth { members["bluetooth"] = .bool(bluetooth) }
            if let source = sdk.source { members["source"] = .string(source) }
            document["sdk"] = .object(members)
        } else {
            document["sdk"] = .null
        }
        return JSONEnvelope.document(kind: "castprep.ios-check", body: document)
    }
}
