public import CastModel
import JSONSupport
import Spelling

/// A layout or style file that cannot be used: the finding names the file, the place in it
/// (line:column and JSON path where known), what is wrong and how to fix it.
public struct RemoteFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The finding, with a stable `remote.*` code.
    public var diagnostic: Diagnostic

    /// Creates an error from a finding.
    public init(_ diagnostic: Diagnostic) { self.diagnostic = diagnostic }

    public var description: String { diagnostic.description }

    /// The codes these files can fail with.
    public enum Code {
        /// The file is larger than ``RemoteFiles/maximumBytes``.
        public static let tooLarge: DiagnosticCode = "remote.file-too-large"
        /// The file is not JSON.
        public static let notJSON: DiagnosticCode = "remote.file-not-json"
        /// A member the file format does not have (often a misspelling).
        public static let unknownMember: DiagnosticCode = "remote.unknown-member"
        /// A member holds the wrong kind of value.
        public static let wrongType: DiagnosticCode = "remote.wrong-type"
        /// A colour that is not `#rgb`, `#rrggbb`, 0–255 or a colour name.
        public static let badColor: DiagnosticCode = "remote.bad-color"
        /// A button type the Cast SDK does not have.
        public static let unknownButton: DiagnosticCode = "remote.unknown-button"
        /// More buttons than the controller has slots.
        public static let tooManySlots: DiagnosticCode = "remote.too-many-slots"
        /// A custom button whose key is missing, not one character, or already used.
        public static let badKey: DiagnosticCode = "remote.bad-key"
        /// A custom button without exactly one action, or with a namespace that is not `urn:x-cast:…`.
        public static let badCustomButton: DiagnosticCode = "remote.bad-custom-button"
    }
}

/// Shared rules for the untrusted files `remote` reads.
public enum RemoteFiles {
    /// The largest layout or style file read (64 KiB): a hand-written file is a few hundred bytes.
    public static let maximumBytes = 64 * 1024

    /// Parses `bytes` as one JSON document with tight limits, as a ``RemoteFileError``.
    static func parse(_ bytes: [UInt8], path: String, what: String) throws(RemoteFileError) -> (
        JSONValue, JSONSourceLocator
    ) {
        guard bytes.count <= maximumBytes else {
            throw RemoteFileError(
                Diagnostic(
                    .error, RemoteFileError.Code.tooLarge,
                    "the \(what) file is \(bytes.count) bytes; the limit is \(maximumBytes)",
                    fix: "a \(what) file is a short hand-written JSON object; check that \(path) is the right file",
                    location: .init(file: path)))
        }
        do {
            let document = try JSONParser(
                limits: .init(maxDepth: 16, maxStringBytes: 4096, maxDocumentBytes: maximumBytes)
            ).parse(bytes)
            return (document.value, JSONSourceLocator(bytes: bytes))
        } catch {
            throw RemoteFileError(
                Diagnostic(
                    .error, RemoteFileError.Code.notJSON, error.message, fix: error.fix,
                    location: .init(file: path, line: error.line, column: error.column)))
        }
    }

    /// A finding at `path` inside the document.
    static func error(
        _ code: DiagnosticCode, _ message: String, fix: String, at jsonPath: JSONPath, file: String,
        locator: JSONSourceLocator
    ) -> RemoteFileError {
        let position = locator.positions(of: [jsonPath])[jsonPath]
        return RemoteFileError(
            Diagnostic(
                .error, code, message, fix: fix,
                location: .init(file: file, line: position?.line, column: position?.column), path: jsonPath))
    }

    /// "did you mean 'x'?" for a misspelt member, or the list of allowed members.
    static func suggestion(for name: String, among allowed: [String]) -> String {
        let scored = allowed.map { ($0, EditDistance.between(name.lowercased(), $0.lowercased(), limit: 8)) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, name.count / 3) {
            return "did you mean '\(best.0)'? (allowed: \(allowed.joined(separator: ", ")))"
        }
        return "allowed: \(allowed.joined(separator: ", "))"
    }
}
