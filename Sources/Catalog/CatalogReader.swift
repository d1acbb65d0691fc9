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
}

/// An error that stops a catalog from being read at all.
public struct CatalogError: Error, Sendable, CustomStringConvertible {
    public var diagnostic: Diagnostic
    public var description: String { diagnostic.description }
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
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if let size = attributes?[.size] as? Int, size > options.maximumFileSize {
            throw CatalogError(
                diagnostic: Diagnostic(
                    .error, "catalog.too-large", "the catalog is \(size) bytes; the limit is \(options.maximumFileSize)",
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
    /// relative references.
    public func read(_ bytes: [UInt8], file: String, resolver: URLResolver) throws -> CatalogReadResult {
        let format = try options.format ?? detectFormat(bytes, file: file)
        var result: CatalogReadResult
        switch format {
        case .m3u:
            result = M3UPlaylistReader(resolver: resolver).read(bytes, file: file)
        case .castVideos, .castVideosChrome, .native:
            let document: JSONDocument
            do {
                document = try JSONParser().parse(bytes)
            } catch {
                throw CatalogError(
                    diagnostic: Diagnostic(
                        .error, DiagnosticCode(error.kind.rawValue), error.message, fix: error.fix,
                        location: .init(file: file, line: error.line, column: error.column)))
            }
            var diagnostics = document.duplicateKeys.map {
                Diagnostic(.warning, "json.duplicate-key", "member \"\($0.path.components.last.map(Self.name) ?? "")\" appears twice; the last value is used",
                           fix: "remove one of them", path: $0.path)
            }
            switch format {
            case .castVideos: result = CastVideosCatalogReader(resolver: resolver).read(document.value)
            case .castVideosChrome: result = CastVideosCatalogReader(resolver: resolver).readChromeShape(document.value)
            default: result = NativeCatalogReader(resolver: resolver).read(document.value)
            }
            diagnostics += result.diagnostics
            result.diagnostics = Self.locate(diagnostics, in: bytes, file: file)
            let itemPositions = JSONSourceLocator(bytes: bytes).positions(of: result.items.compactMap(\.path))
            for index in result.items.indices {
                if let path = result.items[index].path, let position = itemPositions[path] {
                    result.items[index].location = .init(file: file, line: position.line, column: position.column)
                }
            }
        }
        return result
    }

    private static func name(_ component: JSONPath.Component) -> String {
        switch component {
        case .key(let key): key
        case .index(let index): "[\(index)]"
        }
    }

    /// Detects the format from the file name and the first bytes.
    public func detectFormat(_ bytes: [UInt8], file: String) throws -> CatalogFormat {
        let ext = URLResolver.pathExtension(of: file)
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        if bytes[start...].starts(with: Array("#EXTM3U".utf8)) || ext == "m3u" || ext == "m3u8" { return .m3u }
        guard start < bytes.count else {
            throw CatalogError(
                diagnostic: Diagnostic(.error, "catalog.empty", "the catalog file is empty",
                                       fix: "a catalog is a JSON document (f.json shape or CastPrep's own) or an M3U playlist",
                                       location: .init(file: file)))
        }
        if bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[") || ext == "json" {
            // Look at the top-level keys without a full parse when the document is valid; a
            // broken document is parsed later and reports its syntax error there.
            if let document = try? JSONParser().parse(bytes), case .object(let members) = document.value {
                if members["categories"] != nil { return .castVideos }
                if members["items"] != nil || members["castprep"] != nil { return .native }
                if members["media"] != nil { return .castVideosChrome }
                throw CatalogError(
                    diagnostic: Diagnostic(
                        .error, "catalog.format-unknown",
                        "the JSON has none of the keys CastPrep recognises (\"categories\" for f.json, \"items\" for a CastPrep catalog, \"media\" for the chrome sample)",
                        fix: "see Catalogs/README.md for the formats", location: .init(file: file, line: 1, column: 1)))
            }
            return .native
        }
        // Plain lists of URLs are M3U without the header.
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if head.split(whereSeparator: \.isNewline).first.map({ $0.hasPrefix("http") || $0.hasPrefix("#") }) == true { return .m3u }
        throw CatalogError(
            diagnostic: Diagnostic(
                .error, "catalog.format-unknown", "this is neither JSON nor an M3U playlist",
                fix: "pass a CastVideos f.json, a CastPrep catalog (.json) or an .m3u/.m3u8 playlist", location: .init(file: file)))
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
