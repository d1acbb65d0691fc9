import CastModel
import JSONSupport

/// An item's entry in report.json, written straight to bytes.
///
/// The bytes are the ones Foundation's `JSONEncoder` gives with `.sortedKeys` and
/// `.withoutEscapingSlashes` (the form report.json has always had, and what caches written by
/// earlier runs hold), without its boxing of every value: keys in byte order, absent optionals
/// left out, `"`, `\` and control characters escaped (`\b \t \n \f \r`, else `\u00xx`), every
/// other character as its UTF-8, and a `Double` as its `description` less a trailing `.0`.
/// JSONSupport's writer escapes U+2028 and U+2029 as well, so it would change such titles.
/// A test compares the two on hostile values.
enum ReportJSON {
    /// The entry for `report`; `null` when a number is not finite (JSONEncoder refuses those,
    /// and report.json has always carried `null` for such an item).
    static func bytes(_ report: ItemReport) -> [UInt8] {
        guard report.duration.map(\.isFinite) ?? true else { return Array("null".utf8) }
        var writer = ObjectWriter()
        writer.output.reserveCapacity(2048)
        writer.open()
        writer.string("contentId", report.contentID)
        writer.string("contentType", report.contentType)
        writer.key("devices")
        writer.array(report.devices) { writer, device in writer.device(device) }
        writer.key("diagnostics")
        writer.array(report.diagnostics) { writer, finding in writer.diagnostic(finding) }
        if let duration = report.duration {
            writer.key("duration")
            writer.double(duration)
        }
        writer.key("fixes")
        writer.array(report.fixes) { writer, fix in writer.quoted(fix) }
        writer.bool("fromCache", report.fromCache)
        writer.string("id", report.id)
        writer.int("index", report.index)
        writer.string("mediaSummary", report.mediaSummary)
        writer.string("poster", report.poster)
        writer.string("readiness", report.readiness.rawValue)
        writer.string("streamType", report.streamType)
        writer.string("subtitle", report.subtitle)
        writer.string("title", report.title)
        writer.key("tracks")
        writer.array(report.tracks) { writer, track in writer.track(track) }
        writer.close()
        return writer.output
    }

    /// Appends JSON to ``output``, one object member at a time.
    struct ObjectWriter {
        var output: [UInt8] = []
        /// Whether the object being written has no member yet.
        private var isFirst = true
        private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

        mutating func open() {
            output.append(UInt8(ascii: "{"))
            isFirst = true
        }

        mutating func close() {
            output.append(UInt8(ascii: "}"))
            isFirst = false
        }

        mutating func key(_ name: StaticString) {
            if !isFirst { output.append(UInt8(ascii: ",")) }
            isFirst = false
            output.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { output.append(contentsOf: $0) }
            output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }

        mutating func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            quoted(value)
        }

        mutating func int(_ name: StaticString, _ value: Int?) {
            guard let value else { return }
            key(name)
            output.append(contentsOf: String(value).utf8)
        }

        mutating func bool(_ name: StaticString, _ value: Bool) {
            key(name)
            output.append(contentsOf: (value ? "true" : "false").utf8)
        }

        /// A finite number as JSONEncoder writes it: `2` for 2.0, `2.008`, `1e-07`, `1e+16`.
        mutating func double(_ value: Double) {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            output.append(contentsOf: text.utf8)
        }

        mutating func array<Element>(_ elements: [Element], _ write: (inout ObjectWriter, Element) -> Void) {
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(&self, element)
            }
            output.append(UInt8(ascii: "]"))
        }

        /// `value` quoted and escaped as JSONEncoder escapes it.
        mutating func quoted(_ value: String) {
            output.append(UInt8(ascii: "\""))
            var value = value
            value.withUTF8 { bytes in
                var start = 0
                for (offset, byte) in bytes.enumerated()
                where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<offset]))
                    start = offset + 1
                    output.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                    case 0x08: output.append(UInt8(ascii: "b"))
                    case 0x09: output.append(UInt8(ascii: "t"))
                    case 0x0A: output.append(UInt8(ascii: "n"))
                    case 0x0C: output.append(UInt8(ascii: "f"))
                    case 0x0D: output.append(UInt8(ascii: "r"))
                    default:
                        output.append(contentsOf: [
                            UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hexDigits[Int(byte >> 4)],
                            Self.hexDigits[Int(byte & 0xF)],
                        ])
                    }
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
            }
            output.append(UInt8(ascii: "\""))
        }

        mutating func device(_ device: DeviceReadiness) {
            open()
            string("device", device.device)
            string("fix", device.fix)
            string("name", device.name)
            string("readiness", device.readiness.rawValue)
            key("reasons")
            array(device.reasons) { writer, finding in writer.diagnostic(finding) }
            close()
        }

        mutating func diagnostic(_ finding: Diagnostic) {
            open()
            string("code", finding.code.rawValue)
            string("fix", finding.fix)
            if let location = finding.location {
                key("location")
                open()
                int("column", location.column)
                string("file", location.file)
                int("line", location.line)
                close()
            }
            string("message", finding.message)
            string("path", finding.path?.description)
            string("severity", finding.severity.rawValue)
            string("url", finding.url)
            close()
        }

        mutating func track(_ track: TrackReport) {
            open()
            int("cues", track.cues)
            string("format", track.format)
            string("kind", track.kind)
            string("language", track.language)
            string("name", track.name)
            string("source", track.source)
            int("trackId", track.trackID)
            string("url", track.url)
            string("webVtt", track.webVTT)
            close()
        }
    }
}
