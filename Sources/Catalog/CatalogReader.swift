public import CastModel
import Foundation
import JSONSupport

/// The catalog formats CastPrep reads.
public enum CatalogFormat: String, Sendable, Hashable, CaseIterable {
    /// Google's CastVideos `f.json`: categories with base URLs and relative sources, or the
    /// older shape whose `sources` are plain URL strings.
    case castVideos = "castvideos"
    /// The CastVideos-chrome shape: `{"media": [{contentUrl, contentType, title, …}]}`.
    case castVideosChrome = "castvideos-chrome"
    /// CastPrep's own catalog format (see Catalogs/README.md).
    case native = "castprep"
    /// An extended M3U / M3U8 playlist.
    case m3u = "m3u"
}

/// What reading a catalog produced: the items that could be read and every finding.
public struct CatalogReadResult: Sendable {
    public var format: CatalogFormat
    /// Items in catalog order; bad items are reported and left out.
    public var items: [CatalogItem]
    public var diagnostics: [Diagnostic]
    /// The catalog's title, when it has one.
    public var title: String?
    /// How the catalog asks its local files to be served (native catalogs' `serve` member).
    public var serving: CatalogServing?
    /// The JSON text read, kept so positions can be computed when a finding needs one
    /// (computing them for every item up front would cost a second parse of the catalog).
    var source: [UInt8]?
    /// The file name used in locations.
    var file: String?

    /// Adds file:line:column to every diagnostic that has a JSON path but no location.
    ///
    /// One pass over the catalog text, however many diagnostics there are.
    public func locating(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        guard let source, let file else { return diagnostics }
        guard diagnostics.contains(where: { $0.location == nil && $0.path != nil }) else { return diagnostics }
        return CatalogReader.locate(diagnostics, in: source, file: file)
    }

    /// Fills in every item's ``CatalogItem/location`` (one pass over the catalog text).
    public mutating func locateItems() {
        guard let source, let file else { return }
        let positions = JSONSourceLocator(bytes: source).positions(of: items.compactMap(\.path))
        for index in items.indices {
            if let path = items[index].path, let position = positions[path] {
                items[index].location = .init(file: file, line: position.line, column: position.column)
            }
        }
    }
}

/// How a catalog's local files are to be served to a Cast device by `castprep preflight` and
/// `castprep cast`: the folder to publish, and folders to publish *without* CORS headers — to
/// rehearse what a misconfigured CDN does to a cast before the real one is fixed.
public struct CatalogServing: Sendable, Hashable {
    /// The folder published at the server's root (absolute).
    public var root: String
    /// Folders under it served without any CORS header (absolute).
    public var withoutCORS: [String]

    public init(root: String, withoutCORS: [String] = []) {
        self.root = root
        self.withoutCORS = withoutCORS
    }
}

/// An error that stops a catalog from being read at all.
public struct CatalogError: CodedError {
    /// The finding, with the file and where known the line and column.
    public var diagnostic: Diagnostic

    public var code: DiagnosticCode { diagnostic.code }
    public var message: String { diagnostic.message }
    public var fix: String? { diagnostic.fix }
    public var location: FileLocation? { diagnostic.location }
}

/// Reads any supported catalog into ``CatalogItem``s.
///
/// Malformed input never crashes and never loses the good items: a JSON syntax error is
/// reported with file:line:column; a wrong type or a missing key with its JSON path (and the
/// line it is on); a bad item is reported and skipped.
public struct CatalogReader: Sendable {
    /// Reading options.
    public struct Options: Sendable, Hashable {
        /// The largest catalog file accepted, in bytes (default 512 MiB).
        public var maximumFileSize: Int
        /// Forces a format instead of detecting it.
        public var format: CatalogFormat?

        /// Creates options.
        public init(maximumFileSize: Int = 512 << 20, format: CatalogFormat? = nil) {
            self.maximumFileSize = maximumFileSize
            self.format = format
        }
    }

    public var options: Options

    /// Creates a reader.
    public init(options: Options = Options()) { self.options = options }

    /// Reads the catalog file at `path`.
    ///
    /// - Throws: ``CatalogError`` when the file cannot be read or is not a catalog at all.
    public func read(contentsOf path: String) throws -> CatalogReadResult {
        let url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.is-folder", "\(path) is a folder, not a catalog",
                    fix:
                        "name the catalog file in it (a .json catalog or an .m3u playlist); to cast a folder of media files, use castprep cast FOLDER",
                    location: .init(file: path)))
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if let size = attributes?[.size] as? Int, size > options.maximumFileSize {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.too-large",
                    "the catalog is \(size) bytes; the limit is \(options.maximumFileSize)",
                    fix: "split it into several catalogs", location: .init(file: path)))
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: path)
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, exists ? "catalog.unreadable" : "catalog.not-found",
                    exists ? "cannot read the catalog: \(error.localizedDescription)" : "no such file: \(path)",
                    fix: exists ? "check the file's permissions" : "check the path", location: .init(file: path)))
        }
        return try read(Array(data), file: path, resolver: URLResolver(catalogPath: path))
    }

    /// Reads a catalog from bytes; `file` names it in diagnostics and `resolver` resolves its
    /// relative references. JSON is parsed once: the shape is detected from the parsed value.
    public func read(_ bytes: [UInt8], file: String, resolver: URLResolver) throws -> CatalogReadResult {
        let kind = try options.format.map(Kind.init) ?? sniff(bytes, file: file)
        if kind == .playlist {
            return M3UPlaylistReader(resolver: resolver).read(bytes, file: file)
        }
        let document: JSONDocument
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                    location: .init(file: file, line: error.line, column: error.column)))
        }
        let format = try options.format ?? Self.jsonFormat(of: document.value, file: file)
        var diagnostics = document.duplicateKeys.map {
            Diagnostic(
                .warning, "json.duplicate-key",
                "member \"\($0.path.components.last.map(Self.name) ?? "")\" appears twice; the last value is used",
                fix: "remove one of them", path: $0.path)
        }
        var result: CatalogReadResult
        switch format {
        case .castVideos: result = CastVideosCatalogReader(resolver: resolver).read(document.value)
        case .castVideosChrome: result = CastVideosCatalogReader(resolver: resolver).readChromeShape(document.value)
        case .native: result = NativeCatalogReader(resolver: resolver).read(document.value)
        case .m3u: return M3UPlaylistReader(resolver: resolver).read(bytes, file: file)
        }
        diagnostics += result.diagnostics
        result.diagnostics = Self.locate(diagnostics, in: bytes, file: file)
        result.source = bytes
        result.file = file
        return result
    }

    /// Whether bytes hold a playlist or JSON.
    enum Kind: Equatable {
        case playlist, json
        init(_ format: CatalogFormat) { self = format == .m3u ? .playlist : .json }
    }

    static func name(_ component: JSONPath.Component) -> String {
        switch component {
        case .key(let key): key
        case .index(let index): "[\(index)]"
        }
    }

    /// Tells a playlist from JSON by the extension and the first bytes, parsing nothing.
    func sniff(_ bytes: [UInt8], file: String) throws -> Kind {
        let ext = URLSyntax.pathExtension(of: file)
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        if bytes[start...].starts(with: Array("#EXTM3U".utf8)) || ext == "m3u" || ext == "m3u8" { return .playlist }
        guard start < bytes.count else {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.empty", "the catalog file is empty",
                    fix: "a catalog is a JSON document (f.json shape or CastPrep's own) or an M3U playlist",
                    location: .init(file: file)))
        }
        let first = bytes[start]
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || ext == "json" || bytes[0] == 0xFF
            || bytes[0] == 0xFE
        {
            return .json
        }
        // Plain lists of URLs are M3U without the header.
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if head.split(whereSeparator: \.isNewline).first.map({ $0.hasPrefix("http") || $0.hasPrefix("#") }) == true {
            return .playlist
        }
        throw CatalogError(
            diagnostic: Diagnostic(
                .error, "catalog.format-unknown", "this is neither JSON nor an M3U playlist",
                fix: "pass a CastVideos f.json, a CastPrep catalog (.json) or an .m3u/.m3u8 playlist",
                location: .init(file: file)))
    }

    /// Which JSON catalog shape a parsed document is, from its top-level keys.
    static func jsonFormat(of value: JSONValue, file: String) throws -> CatalogFormat {
        guard case .object(let members) = value else {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.format-unknown", "the catalog is a JSON \(value.typeName), not an object",
                    fix: "see Catalogs/README.md for the formats", location: .init(file: file, line: 1, column: 1)))
        }
        if members["categories"] != nil { return .castVideos }
        if members["items"] != nil || members["castprep"] != nil { return .native }
        if members["media"] != nil { return .castVideosChrome }
        throw CatalogError(
            diagnostic: Diagnostic(
                .error, "catalog.format-unknown",
                "the JSON has none of the keys CastPrep recognises (\"categories\" for f.json, \"items\" for a CastPrep catalog, \"media\" for the chrome sample)",
                fix: "see Catalogs/README.md for the formats", location: .init(file: file, line: 1, column: 1)))
    }

    /// Adds file:line:column to every diagnostic that has a JSON path.
    static func locate(_ diagnostics: [Diagnostic], in bytes: [UInt8], file: String) -> [Diagnostic] {
        let paths = Set(diagnostics.compactMap(\.path))
        let positions = JSONSourceLocator(bytes: bytes).positions(of: paths)
        return diagnostics.map { diagnostic in
            var diagnostic = diagnostic
            if diagnostic.location == nil {
                let position = diagnostic.path.flatMap { positions[$0] }
                diagnostic.location = .init(file: file, line: position?.line, column: position?.column)
            }
            return diagnostic
        }
    }
}
