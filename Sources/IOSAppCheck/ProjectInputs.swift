import CastModel
import Foundation

/// The files one check reads, found from PATH.
struct ProjectInputs: Sendable {
    var kind: IOSCheckReport.InputKind
    var infoPlists: [String] = []
    var podfileLocks: [String] = []
    var podfiles: [String] = []
    var packageResolved: [String] = []
    var cartfileResolved: [String] = []
    var sources: [String] = []
    /// `Frameworks/GoogleCast.framework/Info.plist` inside a `.app`.
    var bundledSDKPlist: String?
    /// Findings about the walk itself (a folder too large to walk whole).
    var findings: [Diagnostic] = []

    /// Folders never walked: dependencies' own code, build products, version control.
    static let skippedFolders: Set<String> = [
        ".git", ".svn", ".hg", "Pods", "Carthage", "DerivedData", "build", ".build", "node_modules", ".swiftpm",
    ]
    /// Folder extensions never walked: built bundles and asset catalogs.
    static let skippedExtensions: Set<String> = [
        "app", "appex", "framework", "xcframework", "bundle", "xcassets", "xcarchive", "dSYM", "lproj",
    ]
    static let sourceExtensions: Set<String> = ["swift", "m", "mm", "h"]
    /// Entries looked at before the walk stops (a project is a few thousand).
    static let maximumEntries = 100_000
    static let maximumDepth = 16
    static let maximumSources = 10_000

    /// Finds what PATH names; nil when nothing is there.
    static func locate(_ path: String) -> ProjectInputs? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        if !isDirectory.boolValue {
            var inputs = ProjectInputs(kind: .infoPlist)
            inputs.infoPlists = [path]
            return inputs
        }
        if trimmed.hasSuffix(".app") {
            var inputs = ProjectInputs(kind: .appBundle)
            // iOS bundles are flat; a macOS-style Contents/ is read too.
            let candidates = [trimmed + "/Info.plist", trimmed + "/Contents/Info.plist"]
            inputs.infoPlists = candidates.filter { FileManager.default.fileExists(atPath: $0) }.prefix(1).map { $0 }
            for framework in [
                trimmed + "/Frameworks/GoogleCast.framework/Info.plist",
                trimmed + "/Frameworks/GoogleCast.framework/Resources/Info.plist",
            ]
            where FileManager.default.fileExists(atPath: framework) {
                inputs.bundledSDKPlist = framework
                break
            }
            return inputs
        }
        return walk(trimmed)
    }

    private static func walk(_ root: String) -> ProjectInputs {
        var inputs = ProjectInputs(kind: .project)
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return inputs }
        var entries = 0
        while let relative = enumerator.nextObject() as? String {
            entries += 1
            if entries > maximumEntries {
                inputs.findings.append(
                    Diagnostic(
                        .warning, IOSCheckCode.projectTooLarge,
                        "\(root) holds over \(maximumEntries) files and folders; the rest was not looked at",
                        fix: "name the app's folder or its Info.plist instead of a folder above it",
                        location: .init(file: root)))
                break
            }
            let components = relative.split(separator: "/")
            guard let name = components.last.map(String.init) else { continue }
            let isDirectory = (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory
            if isDirectory {
                let extensionName =
                    name.split(separator: ".").count > 1 ? String(name.split(separator: ".").last ?? "") : ""
                if skippedFolders.contains(name) || skippedExtensions.contains(extensionName)
                    || components.count >= maximumDepth
                {
                    enumerator.skipDescendants()
                }
                continue
            }
            guard (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeRegular else { continue }
            let full = root + "/" + relative
            let isTestFolder = components.dropLast().contains { $0.hasSuffix("Tests") }
            switch name {
            case "Podfile.lock": inputs.podfileLocks.append(full)
            case "Podfile": inputs.podfiles.append(full)
            case "Package.resolved": inputs.packageResolved.append(full)
            case "Cartfile.resolved": inputs.cartfileResolved.append(full)
            default:
                if name == "Info.plist" || name.hasSuffix("-Info.plist"), !isTestFolder {
                    inputs.infoPlists.append(full)
                } else if let dot = name.lastIndex(of: "."),
                    sourceExtensions.contains(String(name[name.index(after: dot)...])),
                    inputs.sources.count < maximumSources
                {
                    inputs.sources.append(full)
                }
            }
        }
        for list in [
            \ProjectInputs.infoPlists, \.podfileLocks, \.podfiles, \.packageResolved, \.cartfileResolved, \.sources,
        ] {
            inputs[keyPath: list].sort()
        }
        return inputs
    }
}

/// Bounded file reads: an input larger than `limit` is not read.
enum BoundedFile {
    static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1), data.count <= limit else { return nil }
        return [UInt8](data)
    }

    /// The file's size in bytes, when it can be asked.
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    static func text(_ path: String, limit: Int) -> String? {
        read(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }
}
