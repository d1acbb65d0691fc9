import CastModel

/// What the Swift and Objective-C sources say about discovery: the receiver IDs in
/// `GCKDiscoveryCriteria`, and whether a custom device picker starts discovery itself.
///
/// A line scan, not a parser: comments are skipped line by line, and an ID given through a
/// constant is looked up among the sources' string constants.
struct SourceFacts: Sendable {
    /// A criteria argument with where it was written.
    struct Argument: Sendable, Hashable {
        var text: String
        var location: Diagnostic.SourceLocation
    }

    var criteria: [Argument] = []
    /// `NAME = "…"`, `NAME = @"…"`, `#define NAME @"…"` anywhere in the sources.
    var constants: [String: String] = [:]
    /// Lines that read devices from `GCKDiscoveryManager` (listener, count, index).
    var deviceReads: [Diagnostic.SourceLocation] = []
    var discoveryStarts: [Diagnostic.SourceLocation] = []
    /// Files that call `startDiscovery` and keep a flag (UserDefaults) that could gate a one-time explanation.
    var filesWithStartAndFlag: Set<String> = []
    /// Whether the SDK's own device UI (cast button or cast dialog) is used.
    var usesSDKDeviceUI = false

    static let defaultReceiverConstant = "kGCKDefaultMediaReceiverApplicationID"
    static let defaultReceiverID = "CC1AD845"
    static let fileLimit = 2 << 20
    /// Bytes read from all sources together; an app's own code is a few megabytes.
    static let totalLimit = 256 << 20

    /// Scans `paths`; unreadable or oversized files are skipped, and reading stops after ``totalLimit`` bytes.
    static func scan(_ paths: [String]) -> SourceFacts {
        var facts = SourceFacts()
        var total = 0
        for path in paths {
            guard let text = BoundedFile.text(path, limit: fileLimit) else { continue }
            total += text.utf8.count
            guard total <= totalLimit else { break }
            facts.read(text, path: path)
        }
        return facts
    }

    mutating func read(_ text: String, path: String) {
        var startsHere = false
        var keepsFlag = false
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = rawLine.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("*") || trimmed.hasPrefix("/*") { continue }
            let line = String(rawLine)
            let location = Diagnostic.SourceLocation(file: path, line: number + 1)
            for marker in ["GCKDiscoveryCriteria(applicationID:", "initWithApplicationID:"] {
                var rest = Substring(line)
                while let range = rest.firstRange(of: marker) {
                    let argument = rest[range.upperBound...].drop { $0 == " " }
                    let end =
                        argument.firstIndex { $0 == ")" || $0 == "]" || $0 == "," || $0 == ";" } ?? argument.endIndex
                    let value = String(argument[..<end]).trimmingCharactersInSet(" \t")
                    if !value.isEmpty { criteria.append(Argument(text: value, location: location)) }
                    rest = rest[range.upperBound...]
                }
            }
            if let constant = Self.constantDefinition(line) { constants[constant.name] = constant.value }
            if line.contains("GCKUICastButton") || line.contains("presentCastDialog") || line.contains("CastButton(") {
                usesSDKDeviceUI = true
            }
            if line.contains("discoveryManager") || line.contains("GCKDiscoveryManager") {
                if line.contains("GCKDiscoveryManagerListener") || line.contains(".add(")
                    || line.contains("addListener") || line.contains("deviceCount")
                    || line.contains("device(at") || line.contains("deviceAtIndex")
                {
                    deviceReads.append(location)
                }
            }
            if line.contains("startDiscovery") {
                discoveryStarts.append(location)
                startsHere = true
            }
            if line.contains("UserDefaults") || line.contains("NSUserDefaults") || line.contains("@AppStorage") {
                keepsFlag = true
            }
        }
        if startsHere, keepsFlag { filesWithStartAndFlag.insert(path) }
    }

    /// `let NAME = "…"`, `static let NAME = "…"`, `NSString *const NAME = @"…";`, `#define NAME @"…"`,
    /// and `let NAME = kGCKDefaultMediaReceiverApplicationID`.
    static func constantDefinition(_ line: String) -> (name: String, value: String)? {
        let trimmed = line.trimmingCharactersInSet(" \t\r")
        if trimmed.hasPrefix("#define ") {
            let parts = trimmed.dropFirst(8).split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let value = CastSDKReaders.quotedStrings(in: String(parts[1])).first else {
                return nil
            }
            return (String(parts[0]), value)
        }
        guard let equals = trimmed.firstIndex(of: "="), !trimmed[equals...].hasPrefix("==") else { return nil }
        let left = trimmed[..<equals].trimmingCharactersInSet(" \t")
        let right = trimmed[trimmed.index(after: equals)...].trimmingCharactersInSet(" \t;")
        let isDefaultReceiver = right == defaultReceiverConstant || right.hasSuffix("." + defaultReceiverConstant)
        guard
            let value = isDefaultReceiver
                ? defaultReceiverID
                : (right.hasPrefix("\"") || right.hasPrefix("@\""))
                    ? CastSDKReaders.quotedStrings(in: right).first : nil
        else { return nil }
        // The name is the last identifier before "=", without a type annotation.
        let beforeColon = left.split(separator: ":").first.map(String.init) ?? left
        guard
            let name = beforeColon.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).last.map(
                String.init),
            !name.isEmpty
        else { return nil }
        return (name, value)
    }

    /// The IDs the criteria name, and the arguments that could not be resolved.
    func applicationIDs() -> (resolved: [AppIDReference], unresolved: [Argument]) {
        var resolved: [AppIDReference] = []
        var unresolved: [Argument] = []
        for argument in criteria {
            var text = argument.text
            if text.hasPrefix("@") { text.removeFirst() }
            if text.hasPrefix("\"") {
                resolved.append(
                    AppIDReference(id: text.trimmingCharactersInSet("\""), origin: .source, location: argument.location)
                )
            } else if text == Self.defaultReceiverConstant || text.hasSuffix("." + Self.defaultReceiverConstant) {
                resolved.append(
                    AppIDReference(id: Self.defaultReceiverID, origin: .source, location: argument.location))
            } else {
                let name = text.split(separator: ".").last.map(String.init) ?? text
                if let value = constants[name] {
                    resolved.append(AppIDReference(id: value, origin: .source, location: argument.location))
                } else {
                    unresolved.append(argument)
                }
            }
        }
        return (resolved, unresolved)
    }
}
