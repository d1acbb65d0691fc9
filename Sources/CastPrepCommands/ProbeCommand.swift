import CastModel
import CommandParsing
import Foundation
import JSONSupport
import MediaProbe
import StreamingFormats
import SystemIO

/// `castprep probe PATH…`: what FFmpeg finds in each file, with the Cast content type.
enum ProbeCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "probe",
            abstract: "Show container, Cast content type with codecs, duration and streams of media files.",
            discussion: """
                Probes each file with FFmpeg (libavformat), several at a time, and prints the contentType a Cast \
                LOAD needs (with RFC 6381 codecs when they are known), the duration of the audio and video, whether \
                an MP4 is fast-start, and every stream, then whether each Cast device plays it, why not, and the \
                smallest ffmpeg command that fixes it (re-encoding only the streams that need it); devices judged alike \
                are listed together and each fix is printed once. \
                Exit status 1 when a file could not be probed.

                Device profiles: \(DeviceProfile.all.map(\.id).joined(separator: ", ")).
                """,
            options: [
                .flag("json", help: "Print one JSON document with every result."),
                .option("jobs", short: "j", valueName: "n", help: "How many files to probe at once.", default: "4"),
                .option("timeout", valueName: "seconds", help: "Give up on a file after this long.", default: "15"),
                .option(
                    "devices", valueName: "ids",
                    help:
                        "Comma-separated device profiles to judge against, or 'none' (default: all; see the list below)."
                ),
                .option(
                    "poster", valueName: "dir",
                    help: "Also write a JPEG poster frame of each video into this directory."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(name: "path", help: "Media files (local paths or http(s) URLs).", arity: .oneOrMore)
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let paths = values.arguments("path")
        let width = try values.integer("jobs", in: 1...64) ?? 4
        let timeout = try values.number("timeout", in: 0.1...3600) ?? 15
        let prober = MediaProber(limits: .init(timeout: timeout))
        let devices = try CommonOptions.deviceProfiles(values, allowsNone: true)
        let judge = DeviceJudge()
        let results = await prober.probe(paths: paths, width: width)
        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        var failures = results.compactMap { result -> Diagnostic? in
            if case .failure(let error) = result { return error.diagnostic }
            return nil
        }
        if let directory = values.option("poster") {
            guard FileManager.default.fileExists(atPath: directory) else {
                throw values.usageError("the poster directory '\(directory)' does not exist", concerning: "poster")
            }
            for case .success(let probe) in results where !probe.videoStreams.isEmpty {
                let name = (probe.source.split(separator: "/").last.map(String.init) ?? "poster") + ".jpg"
                let target = URL(fileURLWithPath: directory).appendingPathComponent(name)
                do {
                    // Decoding and writing both block: keep them off the cooperative pool.
                    try await BlockingWork.run {
                        let bytes = try PosterFrame(timeout: timeout).jpeg(from: probe.source)
                        try Data(bytes).write(to: target, options: .atomic)
                    }
                    io.writeErrorLine("poster: \(target.path)")
                } catch let error as ProbeError {
                    failures.append(
                        Diagnostic(
                            .warning, error.code, error.message, fix: error.fix, location: .init(file: probe.source)))
                } catch {
                    failures.append(
                        Diagnostic(
                            .warning, "poster.write-failed",
                            "cannot write \(target.path): \(error.localizedDescription)",
                            fix: "check that the directory is writable", location: .init(file: probe.source)))
                }
            }
        }
        if values.flag("json") {
            let document = JSONEnvelope.document(
                kind: "castprep.probe",
                body: [
                    "results": .array(
                        zip(paths, results).map { path, result in
                            switch result {
                            case .success(let probe):
                                json(probe, verdicts: judge.verdicts(for: probe, devices: devices))
                            case .failure(let error):
                                ["source": .string(path), "error": DiagnosticJSON.encode(error.diagnostic)]
                            }
                        })
                ])
            io.writeLine(JSONWriter.pretty.string(from: document))
        } else {
            for result in results {
                if case .success(let probe) = result {
                    io.write(render(probe) + render(judge.verdicts(for: probe, devices: devices)))
                }
            }
        }
        printer.print(failures)
        return failures.containsErrors ? 1 : 0
    }

    static func render(_ probe: ProbeResult) -> String {
        var header = ["container \(probe.container)", probe.contentType]
        if let duration = probe.duration { header.append(String(format3(duration)) + " s") }
        if let bitRate = probe.bitRate { header.append("\(bitRate / 1000) kb/s") }
        if let fastStart = probe.isFastStart {
            header.append(fastStart ? "fast start" : "moov at the end (not fast start)")
        }
        var text = probe.source + "\n  " + header.joined(separator: " · ") + "\n"
        if let dash = probe.dash {
            text +=
                "  DASH \(dash.isLive ? "live" : "VOD") · \(dash.adaptationSets.count) adaptation set\(dash.adaptationSets.count == 1 ? "" : "s")\n"
            for set in dash.adaptationSets {
                for representation in set.representations {
                    var parts = ["representation", representation.id, representation.mimeType ?? set.mimeType ?? ""]
                    if let bandwidth = representation.bandwidth { parts.append("\(bandwidth / 1000) kb/s") }
                    if let width = representation.width, let height = representation.height {
                        parts.append("\(width)×\(height)")
                    }
                    if let codecs = representation.codecs ?? set.codecs { parts.append(codecs) }
                    if let language = set.language { parts.append(language) }
                    text += "    " + parts.filter { !$0.isEmpty }.joined(separator: " ") + "\n"
                }
            }
        }
        if let hls = probe.hls {
            var line = [
                "HLS \(hls.isLive ? "live" : "VOD")",
                "\(hls.variants.count) variant\(hls.variants.count == 1 ? "" : "s")",
            ]
            let kinds = Dictionary(grouping: hls.renditions, by: \.type).map {
                "\($0.value.count) \($0.key.lowercased())"
            }.sorted()
            line += kinds
            if let video = hls.hlsVideoSegmentFormat { line.append("hlsVideoSegmentFormat \(video)") }
            if let audio = hls.hlsSegmentFormat { line.append("hlsSegmentFormat \(audio)") }
            text += "  " + line.joined(separator: " · ") + "\n"
            for variant in hls.variants {
                var parts = ["variant", variant.uri, "\(variant.bandwidth / 1000) kb/s"]
                if let width = variant.width, let height = variant.height { parts.append("\(width)×\(height)") }
                if !variant.codecs.isEmpty { parts.append(variant.codecs.joined(separator: ",")) }
                text += "    " + parts.joined(separator: " ") + "\n"
            }
            for rendition in hls.renditions {
                text +=
                    "    \(rendition.type.lowercased()) \"\(rendition.name)\"\(rendition.language.map { " \($0)" } ?? "")\(rendition.isDefault ? " default" : "")\(rendition.uri.map { " \($0)" } ?? "")\n"
            }
        }
        for stream in probe.streams {
            var parts = ["#\(stream.index)", stream.kind.rawValue, stream.codec]
            if let codecString = stream.codecString { parts.append("(\(codecString))") }
            if let profile = stream.profile { parts.append(profile) }
            if let level = stream.level { parts.append("level \(level)") }
            if let width = stream.width, let height = stream.height { parts.append("\(width)×\(height)") }
            if let rate = stream.frameRate { parts.append("\(format3(rate)) fps") }
            if let depth = stream.bitDepth { parts.append("\(depth)-bit") }
            if let chroma = stream.chroma { parts.append(chroma) }
            if let hdr = stream.hdrTransfer { parts.append(hdr) }
            if let dolby = stream.dolbyVisionProfile { parts.append("Dolby Vision profile \(dolby)") }
            if let layout = stream.channelLayout {
                parts.append(layout)
            } else if let channels = stream.channels {
                parts.append("\(channels) ch")
            }
            if let rate = stream.sampleRate { parts.append("\(rate) Hz") }
            if let text = stream.isTextSubtitle { parts.append(text ? "text" : "bitmap") }
            if let language = stream.language { parts.append(language) }
            if stream.isDefault { parts.append("default") }
            if stream.isForced { parts.append("forced") }
            text += "  " + parts.joined(separator: " ") + "\n"
        }
        return text
    }

    /// Devices with the same verdict and the same reasons share one entry, and each distinct fix
    /// is printed once after them, naming the devices it is for when the fixes differ.
    static func render(_ verdicts: [DeviceVerdict]) -> String {
        guard !verdicts.isEmpty else { return "" }
        var text = "  devices:\n"
        for group in VerdictGroup.grouping(verdicts) {
            let mark =
                switch group.outcome {
                case .plays: "plays          "
                case .playsWithCaveats: "plays, caveats "
                case .willNotPlay: "WILL NOT PLAY  "
                }
            text += "    \(mark) \(group.devices.map(\.name).joined(separator: ", "))\n"
            for reason in group.reasons {
                text += "      - \(reason)\n"
            }
        }
        var fixes: [(fix: String, devices: [DeviceProfile])] = []
        for verdict in verdicts where verdict.outcome == .willNotPlay {
            guard let fix = verdict.fix else { continue }
            if let index = fixes.firstIndex(where: { $0.fix == fix }) {
                fixes[index].devices.append(verdict.device)
            } else {
                fixes.append((fix, [verdict.device]))
            }
        }
        if fixes.count == 1 {
            text += "  fix: \(fixes[0].fix)\n"
        } else {
            for entry in fixes {
                text += "  fix for \(entry.devices.map(\.name).joined(separator: ", ")): \(entry.fix)\n"
            }
        }
        return text
    }

    /// Devices judged alike: the same outcome, the same reasons (read without the device's own
    /// name) and the same fix.
    struct VerdictGroup: Equatable {
        var outcome: DeviceVerdict.Outcome
        var devices: [DeviceProfile]
        /// The reasons as printed: with the device's name for one device, neutral for several.
        var reasons: [String]
        var fix: String?
        /// The reasons with each device's name replaced, which is what makes devices alike.
        var neutralReasons: [String]

        /// The groups in the order their first device comes in `verdicts`.
        static func grouping(_ verdicts: [DeviceVerdict]) -> [VerdictGroup] {
            var groups: [VerdictGroup] = []
            for verdict in verdicts {
                let neutral = verdict.reasons.map { neutralMessage($0.message, device: verdict.device) }
                let fix = verdict.outcome == .willNotPlay ? verdict.fix : nil
                if let index = groups.firstIndex(where: {
                    $0.outcome == verdict.outcome && $0.neutralReasons == neutral && $0.fix == fix
                }) {
                    groups[index].devices.append(verdict.device)
                    groups[index].reasons = neutral
                } else {
                    groups.append(
                        VerdictGroup(
                            outcome: verdict.outcome, devices: [verdict.device],
                            reasons: verdict.reasons.map(\.message),
                            fix: fix, neutralReasons: neutral))
                }
            }
            return groups
        }

        /// A reason as it reads for any device: "Google Nest Hub does not decode HEVC video"
        /// becomes "the device does not decode HEVC video".
        static func neutralMessage(_ message: String, device: DeviceProfile) -> String {
            message.replacingOccurrences(of: device.name, with: "the device")
        }
    }

    /// Up to three decimals, without trailing zeros.
    static func format3(_ value: Double) -> String {
        JSONNumber((value * 1000).rounded() / 1000)?.literal ?? String(value)
    }

    static func json(_ probe: ProbeResult, verdicts: [DeviceVerdict]) -> JSONValue {
        var members: [String: JSONValue] = [
            "source": .string(probe.source), "formatName": .string(probe.formatName),
            "container": .string(probe.container),
            "contentType": .string(probe.contentType),
        ]
        if let duration = probe.duration { members["duration"] = JSONValue(duration) }
        if let bitRate = probe.bitRate { members["bitRate"] = JSONValue(bitRate) }
        if let fastStart = probe.isFastStart { members["fastStart"] = .bool(fastStart) }
        members["streamType"] = .string(probe.streamType)
        if let dash = probe.dash {
            members["dash"] = [
                "live": .bool(dash.isLive),
                "adaptationSets": .array(
                    dash.adaptationSets.map { set in
                        var s: [String: JSONValue] = [:]
                        if let mime = set.mimeType { s["mimeType"] = .string(mime) }
                        if let language = set.language { s["language"] = .string(language) }
                        s["representations"] = .array(
                            set.representations.map { representation in
                                var r: [String: JSONValue] = ["id": .string(representation.id)]
                                if let bandwidth = representation.bandwidth { r["bandwidth"] = JSONValue(bandwidth) }
                                if let codecs = representation.codecs ?? set.codecs { r["codecs"] = .string(codecs) }
                                if let width = representation.width { r["width"] = JSONValue(width) }
                                if let height = representation.height { r["height"] = JSONValue(height) }
                                return .object(r)
                            })
                        return .object(s)
                    }),
            ]
        }
        if let hls = probe.hls {
            var h: [String: JSONValue] = [
                "live": .bool(hls.isLive),
                "variants": .array(
                    hls.variants.map { variant in
                        var v: [String: JSONValue] = [
                            "uri": .string(variant.uri), "bandwidth": JSONValue(variant.bandwidth),
                            "codecs": .array(variant.codecs.map(JSONValue.string)),
                        ]
                        if let width = variant.width { v["width"] = JSONValue(width) }
                        if let height = variant.height { v["height"] = JSONValue(height) }
                        return .object(v)
                    }),
                "renditions": .array(
                    hls.renditions.map { rendition in
                        var r: [String: JSONValue] = [
                            "type": .string(rendition.type), "groupId": .string(rendition.groupID),
                            "name": .string(rendition.name), "default": .bool(rendition.isDefault),
                        ]
                        if let language = rendition.language { r["language"] = .string(language) }
                        if let uri = rendition.uri { r["uri"] = .string(uri) }
                        return .object(r)
                    }),
            ]
            if let value = hls.hlsSegmentFormat { h["hlsSegmentFormat"] = .string(value) }
            if let value = hls.hlsVideoSegmentFormat { h["hlsVideoSegmentFormat"] = .string(value) }
            members["hls"] = .object(h)
        }
        members["streams"] = .array(
            probe.streams.map { stream in
                var s: [String: JSONValue] = [
                    "index": JSONValue(stream.index), "kind": .string(stream.kind.rawValue),
                    "codec": .string(stream.codec),
                ]
                func put(_ key: String, _ value: String?) { if let value { s[key] = .string(value) } }
                func put(_ key: String, _ value: Int?) { if let value { s[key] = JSONValue(value) } }
                func put(_ key: String, _ value: Double?) { if let value { s[key] = JSONValue(value) } }
                func put(_ key: String, _ value: Bool?) { if let value { s[key] = .bool(value) } }
                put("codecString", stream.codecString)
                put("profile", stream.profile)
                put("level", stream.level)
                put("language", stream.language)
                put("default", stream.isDefault)
                put("forced", stream.isForced)
                put("width", stream.width)
                put("height", stream.height)
                put("frameRate", stream.frameRate)
                put("bitDepth", stream.bitDepth)
                put("chroma", stream.chroma)
                put("hdrTransfer", stream.hdrTransfer)
                put("dolbyVisionProfile", stream.dolbyVisionProfile)
                put("channels", stream.channels)
                put("channelLayout", stream.channelLayout)
                put("sampleRate", stream.sampleRate)
                put("textSubtitle", stream.isTextSubtitle)
                return .object(s)
            })
        members["devices"] = .array(
            verdicts.map { verdict in
                var v: [String: JSONValue] = [
                    "device": .string(verdict.device.id), "outcome": .string(verdict.outcome.rawValue),
                    "reasons": .array(verdict.reasons.map(DiagnosticJSON.encode)),
                ]
                if let fix = verdict.fix { v["fix"] = .string(fix) }
                return .object(v)
            })
        return .object(members)
    }
}
