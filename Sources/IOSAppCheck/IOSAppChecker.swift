import CastModel

/// Checks an iOS sender app for what Cast discovery on iOS 14 and later needs: the
/// Info.plist's `NSBonjourServices` and `NSLocalNetworkUsageDescription`, the Cast SDK
/// version, the Bluetooth permission text of the Bluetooth variant, and a custom device
/// picker that starts discovery itself.
///
/// ```swift
/// let report = IOSAppChecker.check(path: "MyApp", appID: nil)
/// report.findings  // [ios.bonjour-app-id-missing at MyApp/MyApp/Info.plist:31, …]
/// ```
///
/// It reads files and blocks: callers in async code run it off the cooperative pool.
public enum IOSAppChecker {
    /// The text the Cast documentation gives as an example for `NSLocalNetworkUsageDescription`.
    public static let recommendedLocalNetworkText =
        "${PRODUCT_NAME} uses the local network to discover Cast-enabled devices on your WiFi network."
    static let infoPlistLimit = PlistLibrary.maximumBytes

    /// Checks PATH: an Info.plist (XML or binary), a `.app` bundle or a project folder.
    ///
    /// - Parameters:
    ///   - path: what to check.
    ///   - appID: the receiver application ID (`--app-id`); nil takes the IDs in the sources'
    ///     `GCKDiscoveryCriteria`.
    public static func check(path: String, appID: String? = nil) -> IOSCheckReport {
        var report = IOSCheckReport(path: path, kind: .infoPlist, infoPlists: [], appIDs: [], sdk: nil, findings: [])
        guard let inputs = ProjectInputs.locate(path) else {
            report.findings.append(
                Diagnostic(
                    .error, IOSCheckCode.pathNotFound, "\(path) does not exist",
                    fix: "name an Info.plist, a .app bundle or the app's project folder"))
            return report
        }
        report.kind = inputs.kind
        var findings = inputs.findings

        // Application IDs: --app-id wins over the sources.
        let facts = SourceFacts.scan(inputs.sources)
        if let appID {
            report.appIDs = [AppIDReference(id: appID, origin: .option, location: nil)]
        } else {
            let (resolved, unresolved) = facts.applicationIDs()
            report.appIDs = resolved
            for argument in unresolved {
                findings.append(
                    Diagnostic(
                        .note, IOSCheckCode.appIDUnresolved,
                        "GCKDiscoveryCriteria uses '\(argument.text)', whose value was not found in the sources",
                        fix: "pass the receiver application ID: castprep ios check PATH --app-id ID",
                        location: argument.location))
            }
        }
        for reference in report.appIDs where !reference.isWellFormed {
            let shown =
                reference.origin == .option ? "--app-id '\(reference.id)'" : "the application ID '\(reference.id)'"
            let fix =
                AppIDReference.isHexadecimal(reference.id)
                ? "write it in upper case, as the Cast SDK Developer Console shows it: \(reference.normalized)"
                : "use the 8-digit hexadecimal ID the Cast SDK Developer Console shows for the receiver (\(SourceFacts.defaultReceiverID) for the Default Media Receiver)"
            findings.append(
                Diagnostic(
                    .error, IOSCheckCode.appIDMalformed,
                    "\(shown) is not 8 upper-case hexadecimal digits", fix: fix, location: reference.location))
        }
        var expected: [String] = []
        for reference in report.appIDs
        where AppIDReference.isHexadecimal(reference.id) && !expected.contains(reference.normalized) {
            expected.append(reference.normalized)
        }

        // The app targets' Info.plist files.
        var appPlists: [(path: String, value: PropertyListValue)] = []
        var unreadable = 0
        if let error = PlistLibrary.loadError, !inputs.infoPlists.isEmpty {
            findings.append(Diagnostic(.error, IOSCheckCode.plistLibraryMissing, error.message, fix: error.fix))
        } else {
            for plistPath in inputs.infoPlists {
                guard let bytes = BoundedFile.read(plistPath, limit: infoPlistLimit) else {
                    let tooLarge = BoundedFile.size(plistPath).map { $0 > infoPlistLimit } ?? false
                    findings.append(
                        Diagnostic(
                            .error, tooLarge ? IOSCheckCode.infoPlistTooLarge : IOSCheckCode.infoPlistUnreadable,
                            tooLarge
                                ? "\(plistPath) is over \(infoPlistLimit) bytes; an Info.plist is a few kilobytes"
                                : "\(plistPath) cannot be read",
                            fix: tooLarge
                                ? "name the app's Info.plist"
                                : "check the file's permissions, or name the app's Info.plist",
                            location: .init(file: plistPath)))
                    unreadable += 1
                    continue
                }
                let parsed: ParsedPlist
                do {
                    parsed = try PlistLibrary.read(bytes, name: plistPath)
                } catch {
                    findings.append(
                        Diagnostic(.error, error.code, error.message, fix: error.fix, location: .init(file: plistPath)))
                    unreadable += 1
                    continue
                }
                guard parsed.value.entries != nil else {
                    findings.append(
                        Diagnostic(
                            .error, IOSCheckCode.infoPlistNotDictionary,
                            "\(plistPath) holds a \(parsed.value.typeName), not a dictionary",
                            fix: "name the app's Info.plist",
                            location: .init(file: plistPath)))
                    unreadable += 1
                    continue
                }
                if inputs.kind == .project, !isAppPlist(parsed.value) { continue }
                let result = InfoPlistRules(
                    path: plistPath, plist: parsed, expectedIDs: expected, idsFromOption: appID != nil
                ).run()
                findings += result.findings
                report.infoPlists.append(
                    CheckedInfoPlist(
                        path: plistPath, format: parsed.format, changes: result.changes, fixedCodes: result.fixedCodes))
                appPlists.append((plistPath, parsed.value))
            }
            if appPlists.isEmpty, unreadable == 0 {
                findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.infoPlistNotFound,
                        inputs.kind == .appBundle
                            ? "\(path) has no Info.plist" : "no app target's Info.plist was found in \(path)",
                        fix: "name the app's Info.plist directly: castprep ios check PATH/TO/Info.plist",
                        location: .init(file: path)))
            }
        }

        // The Cast SDK.
        report.sdk = findSDK(inputs)
        findings += sdkFindings(report.sdk, kind: inputs.kind, appPlists: appPlists)
        findings += discoveryFindings(facts)
        report.findings = findings.sortedForDisplay()
        return report
    }

    /// Whether an Info.plist found in a project belongs to an app (not an extension, a
    /// framework or a test bundle). Xcode 13+ projects may have partial Info.plist files
    /// without a package type: those count as the app's.
    static func isAppPlist(_ plist: PropertyListValue) -> Bool {
        if plist["NSExtension"] != nil { return false }
        if let type = plist["CFBundlePackageType"]?.stringValue {
            return type == "APPL" || type.hasPrefix("$(")
        }
        return true
    }

    static func findSDK(_ inputs: ProjectInputs) -> CastSDKDependency? {
        for path in inputs.podfileLocks {
            if let text = BoundedFile.text(path, limit: CastSDKReaders.textLimit),
                let found = CastSDKReaders.podfileLock(text, path: path)
            {
                return found
            }
        }
        for path in inputs.podfiles {
            if let text = BoundedFile.text(path, limit: CastSDKReaders.textLimit),
                let found = CastSDKReaders.podfile(text, path: path)
            {
                return found
            }
        }
        for path in inputs.packageResolved {
            if let bytes = BoundedFile.read(path, limit: CastSDKReaders.textLimit),
                let found = CastSDKReaders.packageResolved(bytes, path: path)
            {
                return found
            }
        }
        for path in inputs.cartfileResolved {
            if let text = BoundedFile.text(path, limit: CastSDKReaders.textLimit),
                let found = CastSDKReaders.cartfileResolved(text, path: path)
            {
                return found
            }
        }
        if let path = inputs.bundledSDKPlist, PlistLibrary.loadError == nil,
            let bytes = BoundedFile.read(path, limit: infoPlistLimit),
            let parsed = try? PlistLibrary.read(bytes, name: path)
        {
            let version = (parsed.value["CFBundleShortVersionString"] ?? parsed.value["CFBundleVersion"])?.stringValue
            return CastSDKDependency(
                manager: .bundle, name: "GoogleCast.framework", version: version.flatMap(SemanticVersion.init),
                requirement: nil,
                includesBluetooth: nil, source: nil, location: .init(file: path))
        }
        return nil
    }

    static func sdkFindings(
        _ sdk: CastSDKDependency?, kind: IOSCheckReport.InputKind, appPlists: [(path: String, value: PropertyListValue)]
    ) -> [Diagnostic] {
        guard let sdk else {
            guard kind != .infoPlist else { return [] }
            return [
                Diagnostic(
                    .note, IOSCheckCode.castSDKNotFound,
                    "no Cast SDK was found (Podfile.lock, Podfile, Package.resolved, Cartfile.resolved, Frameworks/GoogleCast.framework)",
                    fix:
                        "add it with the package manager the app uses: pod '\(CastSDKDefaults.pod)', '~> \(SemanticVersion.recommended)'"
                )
            ]
        }
        var findings: [Diagnostic] = []
        let managerName =
            switch sdk.manager {
            case .cocoapods: "CocoaPods"
            case .swiftPackageManager: "SwiftPM"
            case .carthage: "Carthage"
            case .bundle: "the app bundle"
            }
        if let version = sdk.version {
            let pinned =
                sdk.manager == .bundle
                ? "the app bundle holds \(sdk.name) \(version)" : "\(managerName) pins \(sdk.name) \(version)"
            let how =
                sdk.requirement.map {
                    "the Podfile asks for '\($0)' (no Podfile.lock says which version was installed)"
                } ?? pinned
            if version < .minimumForIOS14 {
                findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.castSDKTooOld,
                        "\(how): an app built with Xcode 12 or later needs Cast SDK \(SemanticVersion.minimumForIOS14) or later to discover devices on iOS 14",
                        fix: sdk.upgradeLine(to: .recommended), location: sdk.location))
            } else if version < .recommended {
                findings.append(
                    Diagnostic(
                        .warning, IOSCheckCode.castSDKNotRecommended,
                        "\(how): it discovers on iOS 14, but the Cast documentation recommends releasing with \(SemanticVersion.recommended)",
                        fix: sdk.upgradeLine(to: .recommended), location: sdk.location))
            }
        } else {
            findings.append(
                Diagnostic(
                    .note, IOSCheckCode.castSDKVersionUnknown,
                    "the version of \(sdk.name) (\(managerName)) is not pinned here, so it cannot be checked against \(SemanticVersion.minimumForIOS14)",
                    fix: sdk.upgradeLine(to: .recommended), location: sdk.location))
        }
        if sdk.includesBluetooth == true {
            for plist in appPlists where plist.value["NSBluetoothAlwaysUsageDescription"]?.stringValue?.isEmpty ?? true
            {
                let alternative =
                    sdk.manager == .cocoapods
                    ? "pod '\(CastSDKDefaults.podWithoutBluetooth(for: sdk.name))', '~> \(SemanticVersion.recommended)'"
                    : "the SDK's variant without Bluetooth (no-bluetooth)"
                findings.append(
                    Diagnostic(
                        .error, IOSCheckCode.bluetoothUsageMissing,
                        "\(sdk.name) includes Bluetooth (guest mode), but \(plist.path) has no NSBluetoothAlwaysUsageDescription: iOS 13+ stops the app when the SDK uses Bluetooth",
                        fix: """
                            if the app does not need guest mode, use \(alternative); otherwise add to \(plist.path):
                                    <key>NSBluetoothAlwaysUsageDescription</key>
                                    <string>${PRODUCT_NAME} uses Bluetooth to find nearby Cast devices in guest mode.</string>
                            """,
                        location: sdk.location))
            }
        }
        return findings
    }

    static func discoveryFindings(_ facts: SourceFacts) -> [Diagnostic] {
        // A custom picker reads devices from GCKDiscoveryManager without the SDK's cast button or dialog.
        guard let firstRead = facts.deviceReads.first, !facts.usesSDKDeviceUI else { return [] }
        guard let firstStart = facts.discoveryStarts.first else {
            return [
                Diagnostic(
                    .error, IOSCheckCode.discoveryNotStarted,
                    "a custom device picker reads GCKDiscoveryManager's devices but nothing calls startDiscovery: since Cast SDK 4.6.0 discovery does not start by itself, so the list stays empty",
                    fix:
                        "call GCKCastContext.sharedInstance().discoveryManager.startDiscovery() when the picker appears (after a one-time explanation of the local-network prompt)",
                    location: firstRead)
            ]
        }
        guard facts.filesWithStartAndFlag.isEmpty else { return [] }
        return [
            Diagnostic(
                .note, IOSCheckCode.discoveryExplanationMissing,
                "startDiscovery triggers iOS's local-network prompt; nothing here looks like a one-time explanation shown before the first scan",
                fix:
                    "before the first startDiscovery, show once (remembered in UserDefaults) why the app asks for the local network",
                location: firstStart)
        ]
    }
}

/// Pod names the fixes suggest.
enum CastSDKDefaults {
    static let pod = "google-cast-sdk"

    /// The pod without Bluetooth matching `name` (`google-cast-sdk` → `google-cast-sdk-no-bluetooth`).
    static func podWithoutBluetooth(for name: String) -> String {
        name.hasSuffix("-no-bluetooth") ? name : name + "-no-bluetooth"
    }
}
