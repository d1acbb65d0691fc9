import CastModel
import Foundation
import JSONSupport

/// Reading a video straight from its text, without a ``JSONValue`` tree.
///
/// A streamed f.json has already been checked whole (syntax, UTF-8, nesting, lengths) by
/// ``CatalogStreamReader``'s first pass, so a video's bytes are valid JSON. The plain shape
/// that nearly every video has — an object of known members with the expected types, each
/// once, strings without escapes — is read here member by member into the values
/// ``CastVideosCatalogReader/readVideo(_:at:bases:index:diagnostics:)`` takes from the tree,
/// and the same finishing steps (sources, tracks, images, the item) make the item and the
/// findings about its values. Anything else — an unknown or repeated member, a null, another
/// type, an escape, a source given as a plain URL, a track id that is not an integer — makes
/// this give up, and the video goes the general way, which words every finding.
extension CastVideosCatalogReader {
    /// Reads the video whose text is `text` (one JSON value, already checked), appending its
    /// item (when it has one) to `items` and the findings about its values to `diagnostics`;
    /// false, with nothing appended, when the video needs the general reader. The item is
    /// appended, not returned: handed back through an optional it was copied and destroyed.
    ///
    /// The video's members are read into `scratch`, which the caller keeps from one video to
    /// the next: its source and track lists are emptied and filled again, not made and freed
    /// for every video, and no video is destroyed at the end (an optional one handed back went
    /// through the runtime's generic witnesses, about a thousand instructions a video).
    func readVideo(
        text: UnsafeBufferPointer<UInt8>, at path: JSONPath, bases: CategoryBases, index: Int,
        diagnostics: inout [Diagnostic], into items: inout [CatalogItem], scratch video: inout PlainVideo
    ) -> Bool {
        var lexer = PlainJSONLexer(bytes: text)
        video.clear()
        guard lexer.read(into: &video) else { return false }
        var local: [Diagnostic] = []
        var sources: [MediaSource] = []
        if !video.sources.isEmpty {
            sources.reserveCapacity(video.sources.count)
            for sourceIndex in video.sources.indices {
                if let source = source(
                    type: video.sources[sourceIndex].type, mime: video.sources[sourceIndex].mime,
                    reference: video.sources[sourceIndex].url,
                    at: path.appending("sources").appending(index: sourceIndex), bases: bases,
                    diagnostics: &local)
                {
                    sources.append(source)
                }
            }
        }
        let duration = CatalogItem.checkedDuration(
            video.duration.map(JSONNumber.doubleValue(ofLiteral:)), diagnostics: &local, path: path)
        let images = self.images(
            small: video.smallImage, poster: video.poster, thumb: video.thumb, base: bases["images"])
        var captions: [CaptionTrack] = []
        if !video.tracks.isEmpty {
            captions.reserveCapacity(video.tracks.count)
            // By index, each field read where it lies (iterating copied every entry out).
            for trackIndex in video.tracks.indices {
                if let track = track(
                    id: video.tracks[trackIndex].id, type: video.tracks[trackIndex].type,
                    subtype: video.tracks[trackIndex].subtype, reference: video.tracks[trackIndex].contentID,
                    name: video.tracks[trackIndex].name, language: video.tracks[trackIndex].language,
                    at: path.appending("tracks").appending(index: trackIndex), base: bases["tracks"],
                    diagnostics: &local)
                {
                    captions.append(track)
                }
            }
        }
        diagnostics += local
        if let item = item(
            title: video.title, sources: sources, description: video.subtitle, studio: video.studio,
            duration: duration, images: images, captions: captions, at: path, index: index,
            diagnostics: &diagnostics)
        {
            items.append(item)
        }
        return true
    }
}

/// The members of a plain video, as its text gives them.
struct PlainVideo {
    struct Source {
        var type: String?
        var mime: String?
        var url: ReferenceBytes?
    }

    struct Track {
        var id: Int?
        var type: String?
        var subtype: String?
        var contentID: ReferenceBytes?
        var name: String?
        var language: String?
    }

    var title: String?
    var subtitle: String?
    var studio: String?
    /// The number's literal, converted by ``JSONNumber/doubleValue(ofLiteral:)``.
    var duration: String?
    /// References are their bytes in the video's text, joined to their base without a string
    /// of their own (see CatalogReference).
    var smallImage: ReferenceBytes?
    var poster: ReferenceBytes?
    var thumb: ReferenceBytes?
    /// Empty when the video has none (an empty list and a missing one read alike).
    var sources: [Source] = []
    var tracks: [Track] = []

    /// Empties the video for the next one, keeping the room its lists have.
    mutating func clear() {
        title = nil
        subtitle = nil
        studio = nil
        duration = nil
        smallImage = nil
        poster = nil
        thumb = nil
        sources.removeAll(keepingCapacity: true)
        tracks.removeAll(keepingCapacity: true)
    }
}

/// The member names of a plain video, its sources and its tracks, matched on their bytes
/// (no `String` made per member).
enum PlainKey {
    case title, subtitle, studio, duration, smallImage, poster, thumb, sources, tracks
    case type, mime, url
    case id, subtype, contentID, name, language

    private static let names = ShortKeyTable<PlainKey>([
        ("title", .title), ("subtitle", .subtitle), ("studio", .studio), ("duration", .duration),
        ("image-480x270", .smallImage), ("image-780x1200", .poster), ("thumb", .thumb), ("sources", .sources),
        ("tracks", .tracks), ("type", .type), ("mime", .mime), ("url", .url), ("id", .id), ("subtype", .subtype),
        ("contentId", .contentID), ("name", .name), ("language", .language),
    ])

    /// The name whose UTF-8 bytes are `bytes`; nil for any other.
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let key = Self.names.value(forKeyBytes: bytes) else { return nil }
        self = key
    }
}

/// Steps through JSON text that is known to be valid, reading only the plain shape of a
/// video; every method returns nil (give up) at anything else.
struct PlainJSONLexer {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Reads the video object into `video` (an empty one); false when it is not of the plain
    /// shape, `video` then holding what was read before the lexer gave up.
    mutating func read(into video: inout PlainVideo) -> Bool {
        var seen: UInt16 = 0
        // The video is handed to each member's step, not captured by it: a captured video was
        // copied out once read, and the copy destroyed with the original.
        let complete = object(filling: &video) { key, lexer, video in
            let bit: UInt16
            switch key {
            case .title:
                bit = 1 << 0
                guard let value = lexer.string() else { return false }
                video.title = value
            case .subtitle:
                bit = 1 << 1
                guard let value = lexer.string() else { return false }
                video.subtitle = value
            case .studio:
                bit = 1 << 2
                guard let value = lexer.string() else { return false }
                video.studio = value
            case .duration:
                bit = 1 << 3
                guard let value = lexer.number() else { return false }
                video.duration = value
            case .smallImage:
                bit = 1 << 4
                guard let value = lexer.reference() else { return false }
                video.smallImage = value
            case .poster:
                bit = 1 << 5
                guard let value = lexer.reference() else { return false }
                video.poster = value
            case .thumb:
                bit = 1 << 6
                guard let value = lexer.reference() else { return false }
                video.thumb = value
            case .sources:
                bit = 1 << 7
                // Appended to the video's list, which kept its room from the last video (a
                // second `sources` member gives up below, whatever it appended).
                let read = lexer.array { lexer in
                    guard let source = lexer.source() else { return false }
                    video.sources.append(source)
                    return true
                }
                guard read else { return false }
            case .tracks:
                bit = 1 << 8
                let read = lexer.array { lexer in
                    guard let track = lexer.track() else { return false }
                    video.tracks.append(track)
                    return true
                }
                guard read else { return false }
            default:
                return false
            }
            guard seen & bit == 0 else { return false }
            seen |= bit
            return true
        }
        guard complete else { return false }
        skipWhitespace()
        return index == bytes.count
    }

    private mutating func source() -> PlainVideo.Source? {
        var source = PlainVideo.Source()
        var seen: UInt8 = 0
        let complete = object(filling: &source) { key, lexer, source in
            let bit: UInt8
            switch key {
            case .type:
                bit = 1 << 0
                guard let value = lexer.string(commonly: PlainJSONLexer.sourceTypes) else { return false }
                source.type = value
            case .mime:
                bit = 1 << 1
                guard let value = lexer.string(commonly: PlainJSONLexer.sourceMIMETypes) else { return false }
                source.mime = value
            case .url:
                bit = 1 << 2
                guard let value = lexer.reference() else { return false }
                source.url = value
            default:
                return false
            }
            guard seen & bit == 0 else { return false }
            seen |= bit
            return true
        }
        return complete ? source : nil
    }

    private mutating func track() -> PlainVideo.Track? {
        var track = PlainVideo.Track()
        var seen: UInt8 = 0
        let complete = object(filling: &track) { key, lexer, track in
            let bit: UInt8
            switch key {
            case .id:
                bit = 1 << 0
                // The general reader's conversions: an integer literal, or a string holding one.
                lexer.skipWhitespace()
                if lexer.index < lexer.bytes.count, lexer.bytes[lexer.index] == UInt8(ascii: "\"") {
                    guard let text = lexer.string(), let id = Int(URLResolver.trimming(text, .whitespaces)) else {
                        return false
                    }
                    track.id = id
                } else {
                    guard let literal = lexer.number(), let id = Int(literal) else { return false }
                    track.id = id
                }
            case .type:
                bit = 1 << 1
                guard let value = lexer.string(commonly: PlainJSONLexer.trackTypes) else { return false }
                track.type = value
            case .subtype:
                bit = 1 << 2
                guard let value = lexer.string(commonly: PlainJSONLexer.trackSubtypes) else { return false }
                track.subtype = value
            case .contentID:
                bit = 1 << 3
                guard let value = lexer.reference() else { return false }
                track.contentID = value
            case .name:
                bit = 1 << 4
                guard let value = lexer.string() else { return false }
                track.name = value
            case .language:
                bit = 1 << 5
                guard let value = lexer.string() else { return false }
                track.language = value
            default:
                return false
            }
            guard seen & bit == 0 else { return false }
            seen |= bit
            return true
        }
        return complete ? track : nil
    }

    /// Reads an object into `value`, calling `member` with each key (positioned before its
    /// value); false when the text is not an object or `member` gives up.
    private mutating func object<Value>(
        filling value: inout Value, _ member: (PlainKey, inout PlainJSONLexer, inout Value) -> Bool
    ) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard let key = rawString() else { return false }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            guard let known = PlainKey(key), member(known, &self, &value) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "}") { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    /// Reads an array, calling `element` before each element; false when the text is not an
    /// array or `element` gives up.
    private mutating func array(_ element: (inout PlainJSONLexer) -> Bool) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return false }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            guard element(&self) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "]") { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    /// A string value without escapes.
    private mutating func string() -> String? {
        skipWhitespace()
        return rawString().map { String(decoding: $0, as: UTF8.self) }
    }

    /// ``string()`` for a member whose values are nearly always one of `common`: a value equal
    /// to one of them is that string literal, shared (no string made, checked and, past 15
    /// bytes, allocated for each of thousands of sources).
    private mutating func string(commonly common: [String]) -> String? {
        skipWhitespace()
        guard let bytes = rawString() else { return nil }
        for literal in common where literal.utf8.count == bytes.count {
            if literal.withUTF8Bytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return literal
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The values the sample catalogs and their copies give a source's `type` and `mime`, and a
    /// track's `type` and `subtype`.
    static let sourceTypes: [String] = ["hls", "dash", "mp4"]
    static let sourceMIMETypes: [String] = [
        "application/x-mpegurl", "application/dash+xml", "video/mp4", "application/vnd.apple.mpegurl",
    ]
    static let trackTypes: [String] = ["text"]
    static let trackSubtypes: [String] = ["captions", "subtitles"]

    /// A string value without escapes, as the bytes of a reference.
    private mutating func reference() -> ReferenceBytes? {
        skipWhitespace()
        return rawString().map(ReferenceBytes.init(bytes:))
    }

    /// The bytes between the quotes of a string without escapes (the first pass checked that
    /// they are UTF-8 without control characters).
    private mutating func rawString() -> UnsafeBufferPointer<UInt8>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        // Plain runs a word at a time; the bytes that end a run are judged here (the first
        // pass checked them: non-ASCII and control bytes are text).
        var scan = JSONBytes.plainRunEnd(in: bytes, from: start)
        while scan < bytes.count {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") {
                index = scan + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<scan])
            }
            if byte == UInt8(ascii: "\\") { return nil }
            scan += 1
        }
        return nil
    }

    /// A number's literal.
    private mutating func number() -> String? {
        skipWhitespace()
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                return literal(from: start)
            }
        }
        return literal(from: start)
    }

    private func literal(from start: Int) -> String? {
        guard index > start else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func skipWhitespace() { index = JSONBytes.whitespaceEnd(in: bytes, from: index) }
}
