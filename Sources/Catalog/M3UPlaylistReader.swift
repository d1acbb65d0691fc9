import CastModel
import Foundation

/// Reads extended M3U / M3U8 playlists into catalog items.
///
/// `#EXTINF:<seconds> [attributes],<title>` gives the duration and title of the next entry;
/// `tvg-logo` becomes the image and `group-title` the subtitle. Relative entries resolve
/// against the playlist's location. An HLS *media* or *master* playlist (one with
/// `#EXT-X-` stream tags) is not a list of items: it becomes a single HLS item.
///
/// Bounded: a line longer than ``maximumLineBytes`` is refused with `catalog.m3u-line-too-long`
/// (with its entry) before anything else reads it, and a duration past
/// ``CatalogItem/maximumDuration`` with `catalog.duration-out-of-range`.
public struct M3UPlaylistReader: Sendable {
    public var resolver: URLResolver

    /// The longest line read, in UTF-8 bytes. URLs with tokens run to a few KiB; one of
    /// megabytes (a 50 MB attribute, say) would cost seconds of CPU and gigabytes downstream.
    public static let maximumLineBytes = 64 << 10

    /// Creates a reader.
    public init(resolver: URLResolver) { self.resolver = resolver }

    /// Reads a playlist from bytes.
    public func read(_ bytes: [UInt8], file: String) -> CatalogReadResult {
        var diagnostics: [Diagnostic] = []
        let text: String
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        // Long lines are cut out of the bytes before anything decodes or splits them, which
        // would cost seconds of CPU on a 50 MB line.
        let (bounded, longLines) = Self.removingLongLines(body)
        if let utf8 = String(validating: bounded, as: UTF8.self) {
            text = utf8
        } else {
            // .m3u files from older tools are Latin-1; decode rather than fail.
            text = String(bounded.map { Character(Unicode.Scalar($0)) })
            diagnostics.append(
                Diagnostic(
                    .note, "catalog.m3u-latin1", "the playlist is not UTF-8; read as Latin-1",
                    fix: "save it as UTF-8 (.m3u8) so titles with accents survive", location: .init(file: file)))
        }
        let lines = text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        // A refused line is empty now; an #EXTINF that was refused takes its entry (the next
        // URL line) with it.
        var refused: Set<Int> = []
        for long in longLines {
            diagnostics.append(
                Diagnostic(
                    .error, "catalog.m3u-line-too-long",
                    "line \(long.offset + 1) is \(long.size) bytes; the limit is \(Self.maximumLineBytes); its entry is skipped",
                    fix:
                        "keep each line under 64 KiB: shorten the URL or the #EXTINF attributes (put logos in files and refer to them by URL)",
                    location: .init(file: file, line: long.offset + 1, column: 1)))
            refused.insert(long.offset)
            if long.isExtinf, long.offset + 1 < lines.count,
                let next = lines[(long.offset + 1)...].firstIndex(where: {
                    !$0.hasPrefix("#") && !$0.allSatisfy(\.isWhitespace)
                })
            {
                refused.insert(next)
            }
        }
        let streamTags = ["#EXT-X-TARGETDURATION", "#EXT-X-STREAM-INF", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-MEDIA:"]
        if lines.contains(where: { line in streamTags.contains { line.hasPrefix($0) } }) {
            let url = resolver.documentURL.absoluteString
            var item = CatalogItem(
                id: "item-1", index: 0, title: resolver.documentURL.deletingPathExtension().lastPathComponent,
                sources: [MediaSource(kind: .hls, url: url, declaredContentType: "application/x-mpegurl")])
            item.location = .init(file: file, line: 1, column: 1)
            item.metadataType = .generic
            diagnostics.append(
                Diagnostic(
                    .note, "catalog.m3u-is-hls",
                    "this is an HLS stream playlist, not a list of items; it is cast as one HLS item",
                    location: .init(file: file, line: 1, column: 1)))
            return CatalogReadResult(format: .m3u, items: [item], diagnostics: diagnostics)
        }
        var items: [CatalogItem] = []
        var pending: (duration: Double?, title: String?, attributes: [String: String], line: Int)?
        for (offset, rawLine) in lines.enumerated() {
            let lineNumber = offset + 1
            if refused.contains(offset) {
                if !rawLine.hasPrefix("#") { pending = nil }
                continue
            }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line == "#EXTM3U" || line.hasPrefix("#EXTM3U ") { continue }
            if line.hasPrefix("#EXTINF:") {
                if let previous = pending {
                    diagnostics.append(
                        Diagnostic(
                            .warning, "catalog.m3u-extinf-orphan",
                            "#EXTINF on line \(previous.line) is not followed by a URL; ignored",
                            fix: "put the entry's URL or path on the line after #EXTINF",
                            location: .init(file: file, line: previous.line, column: 1)))
                }
                pending = parseExtinf(String(line.dropFirst(8)), line: lineNumber)
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let url = resolver.resolve(line) else {
                diagnostics.append(
                    Diagnostic(
                        .error, "catalog.m3u-bad-entry", "\"\(line)\" is not a URL or path; skipped", fix: nil,
                        location: .init(file: file, line: lineNumber, column: 1)))
                pending = nil
                continue
            }
            let title =
                pending?.title.flatMap { $0.isEmpty ? nil : $0 }
                ?? URL(string: url)?.deletingPathExtension().lastPathComponent.removingPercentEncoding
            var item = CatalogItem(
                id: CatalogItem.positionalID(index: items.count), index: items.count, title: title,
                sources: [MediaSource(kind: .guess(fromURL: url), url: url)])
            if let duration = CatalogItem.checkedDuration(
                pending?.duration, diagnostics: &diagnostics,
                location: .init(file: file, line: pending?.line ?? lineNumber, column: 1)),
                duration > 0
            {
                item.duration = duration
            }
            if let attributes = pending?.attributes {
                if let logo = attributes["tvg-logo"], let logoURL = resolver.resolve(logo) {
                    item.images = [CastImage(url: logoURL)]
                }
                item.subtitle = attributes["group-title"]
            }
            item.metadataType = .generic
            item.location = .init(file: file, line: pending?.line ?? lineNumber, column: 1)
            items.append(item)
            pending = nil
        }
        if let previous = pending {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.m3u-extinf-orphan",
                    "#EXTINF on line \(previous.line) is not followed by a URL; ignored",
                    fix: "put the entry's URL or path on the line after #EXTINF",
                    location: .init(file: file, line: previous.line, column: 1)))
        }
        if items.isEmpty {
            diagnostics.append(
                Diagnostic(
                    .warning, "catalog.empty", "the playlist has no entries", fix: nil, location: .init(file: file)))
        }
        return CatalogReadResult(format: .m3u, items: items, diagnostics: diagnostics)
    }

    /// `bytes` with every line longer than ``maximumLineBytes`` emptied (its line break kept,
    /// so line numbers stay), and those lines' 0-based numbers, sizes and whether each was an
    /// `#EXTINF`. Line breaks are `\n`, `\r\n` and `\r`, as in the text split that follows.
    static func removingLongLines(_ bytes: ArraySlice<UInt8>) -> (
        bytes: [UInt8], long: [(offset: Int, size: Int, isExtinf: Bool)]
    ) {
        bytes.withUnsafeBufferPointer { buffer in
            var output: [UInt8] = []
            var long: [(offset: Int, size: Int, isExtinf: Bool)] = []
            var line = 0
            var start = 0
            var index = 0
            func emit(upTo end: Int) {
                let size = end - start
                if size > maximumLineBytes {
                    long.append((line, size, buffer[start..<end].starts(with: Array("#EXTINF:".utf8))))
                } else {
                    output.append(contentsOf: buffer[start..<end])
                }
            }
            while index < buffer.count {
                let byte = buffer[index]
                guard byte == 0x0A || byte == 0x0D else {
                    index += 1
                    continue
                }
                emit(upTo: index)
                var next = index + 1
                if byte == 0x0D, next < buffer.count, buffer[next] == 0x0A { next += 1 }
                output.append(contentsOf: buffer[index..<next])
                line += 1
                start = next
                index = next
            }
            emit(upTo: buffer.count)
            return (output, long)
        }
    }

    /// Parses `-1 tvg-logo="x" group-title="y",Title, with comma`.
    func parseExtinf(_ text: String, line: Int) -> (
        duration: Double?, title: String?, attributes: [String: String], line: Int
    ) {
        var attributes: [String: String] = [:]
        var scalars = Substring(text)
        let durationText = scalars.prefix { !$0.isWhitespace && $0 != "," }
        scalars = scalars.dropFirst(durationText.count)
        // Attributes are key="value" pairs up to the first comma outside quotes.
        var title: String?
        while let first = scalars.first {
            if first == "," {
                title = String(scalars.dropFirst()).trimmingCharacters(in: .whitespaces)
                break
            }
            if first.isWhitespace {
                scalars = scalars.dropFirst()
                continue
            }
            let key = scalars.prefix { $0 != "=" && $0 != "," && !$0.isWhitespace }
            scalars = scalars.dropFirst(key.count)
            guard scalars.first == "=" else { continue }
            scalars = scalars.dropFirst()
            var value = ""
            if scalars.first == "\"" {
                scalars = scalars.dropFirst()
                let inner = scalars.prefix { $0 != "\"" }
                value = String(inner)
                scalars = scalars.dropFirst(inner.count + 1)
            } else {
                let inner = scalars.prefix { $0 != "," && !$0.isWhitespace }
                value = String(inner)
                scalars = scalars.dropFirst(inner.count)
            }
            attributes[key.lowercased()] = value
        }
        return (Double(durationText), title, attributes, line)
    }
}
