import Captions
import CastModel
import Catalog
import Foundation
import JSONSupport
import MediaProbe
import Synchronization
import SystemIO

/// What one item became after every stage: its report, the LOAD request that casts it, and
/// its entry in the corrected catalog.
struct InspectedItem: Sendable, Codable {
    var report: ItemReport
    /// The LOAD request's wire JSON, or nil when no request could be built.
    var loadJSON: String?
    /// The queue item's wire JSON, for `queue.json`: compact (its size decides how items are
    /// split across messages) and indented (as the file shows it).
    var queueItemJSON: String?
    var queueItemPrettyJSON: String?
    /// The corrected catalog entry (CastPrep's own format).
    var catalogEntryJSON: String
}

/// Runs every stage for one catalog item: probe, captions, request building, validation,
/// device verdicts, then the receiver's HTTP checks. Findings are collected, never thrown:
/// one bad item must not stop a library of thousands.
struct ItemInspector: Sendable {
    var devices: [DeviceProfile]
    var outputDirectory: String
    var serving: LocalServing
    var prober: MediaProber
    var builder: CastRequestBuilder
    var checker: (any ReceiverChecking)?
    var makePosters: Bool
    /// Whether to run the ffmpeg fix for local media that some device cannot play, and cast
    /// the fixed copy (written to the output folder) instead.
    var applyFixes: Bool = false
    /// The files preflight wrote in the output folder; a caption, poster or fixed copy is
    /// written only where nothing else is in the way, and recorded. Nil writes without asking.
    var manifest: OutputManifest?
    /// The poster frames written in this run, shared by every copy of the inspector.
    var writtenPosters = WrittenPosters()
    /// Probes of local files in this run, shared by every copy of the inspector: items naming
    /// the same file (a hard link, the same path twice) are probed once.
    var localProbes = LocalFileMemo<Result<ProbeResult, ProbeError>>(capacity: 256)
    /// Probes of small remote media in this run by their bytes, shared the same way: a URL
    /// serving the bytes of one probed before is not demuxed and decoded again.
    var remoteProbes = RemoteProbeMemo()
    /// Poster frames of local files in this run, shared the same way (a JPEG is tens of
    /// kilobytes, so fewer are kept).
    var localPosters = LocalFileMemo<Result<[UInt8], any Error>>(capacity: 32)

    func inspect(_ original: CatalogItem, catalogFindings: [Diagnostic]) async -> InspectedItem {
        var item = original
        var findings = catalogFindings
        var fixes: [String] = []
        var tracks: [TrackReport] = []
        var probe: ProbeResult?
        var poster: String?
        var fetchedStart: FetchedMediaStart?
        let label = item.title.map { "\"\($0)\"" } ?? item.id

        // 1. Probe the source the receiver will be given.
        if let source = builder.preferredSource(of: item), let sourceIndex = item.sources.firstIndex(of: source) {
            let local = LocalServing.filePath(of: source.url)
            // Whether the file is there and, when it is one, what identifies its bytes: one
            // trip off the cooperative pool for both.
            var file: (exists: Bool, key: LocalFileKey?)?
            if let local {
                file =
                    (try? await BlockingWork.run {
                        // One stat for a regular file; the existence check only for anything else.
                        let key = LocalFileKey(path: local)
                        return (exists: key != nil || FileManager.default.fileExists(atPath: local), key: key)
                    }) ?? (exists: false, key: nil)
            }
            if let local, file?.exists != true {
                findings.append(
                    Diagnostic(
                        .error, "media.file-missing", "\(label): the media file \(local) does not exist",
                        fix: "fix the path in the catalog or restore the file", location: item.location, path: item.path
                    ))
            } else {
                // A remote URL's start is fetched by the receiver check's own first request and
                // kept for that check: the probe's memo reads the body from it, so media served
                // under many URLs is neither fetched again nor probed again.
                if local == nil, source.kind != .hls, source.kind != .dash, let checker {
                    fetchedStart = await checker.fetchMediaStart(source.url, bodyLimit: remoteMemo.sizeLimit)
                }
                switch await probeSource(local ?? source.url, key: file?.key, fetched: fetchedStart) {
                case .success(let result):
                    probe = result
                    findings += ProbeEnrichment.apply(
                        result, toSourceAt: sourceIndex, of: &item, conflicts: .preferProbe)
                case .failure(let error):
                    findings.append(
                        Diagnostic(
                            .error, error.code, "\(label): \(error.message)", fix: error.fix,
                            location: item.location, path: item.path, url: source.url))
                }
                if makePosters, let local, let probe, !probe.videoStreams.isEmpty {
                    poster = await writePoster(for: item, from: local, key: file?.key, findings: &findings)
                }
            }
        } else {
            findings.append(
                Diagnostic(
                    .error, "catalog.no-source", "\(label) has no media URL", fix: "add \"url\" or \"sources\"",
                    location: item.location, path: item.path))
        }

        // 2. Captions: side-loaded tracks of any format, then text streams inside local media.
        var captions: [CaptionTrack] = []
        for (index, track) in item.captions.enumerated() {
            let (converted, report) = await convert(track, index: index, of: item, findings: &findings)
            captions.append(converted)
            tracks.append(report)
        }
        var extractedEmbedded = false
        if let probe, let source = builder.preferredSource(of: item), let local = LocalServing.filePath(of: source.url),
            !probe.subtitleStreams.isEmpty
        {
            for (track, report) in await extractEmbedded(
                from: local, item: item, existing: captions.count, findings: &findings)
            {
                captions.append(track)
                tracks.append(report)
                extractedEmbedded = true
            }
        }
        item.captions = captions

        // 3. Serve local files: every file: URL becomes the built-in server's http URL.
        serving.rebase(&item, findings: &findings)

        // 4. Build and validate the request the sender will send.
        let (load, buildFindings) = builder.loadRequest(for: item)
        findings.append(contentsOf: buildFindings.map { located($0, item) })
        // Written once: the validator measures the frame from it, and it is the item's LOAD text.
        let loadText = Self.compactJSON(of: load)
        findings.append(
            contentsOf: CastValidator().validate(load, payloadSize: loadText.utf8.count).map { located($0, item) })
        let (queueItem, _) = builder.queueItem(for: item)
        for (index, track) in (load.media?.tracks ?? []).filter({ $0.type == .text }).enumerated()
        where index < tracks.count {
            tracks[index].trackID = track.trackID
            tracks[index].url = track.trackContentID
        }

        // 5. Fetch as the receiver does. What the probe already found about a URL (a refused
        // connection, a name that does not resolve) is said once, not again by the fetch.
        if let checker, let media = load.media {
            let fetched = await checker.check(media: media, origin: nil, fetched: fetchedStart).map {
                located($0, item)
            }
            findings.append(contentsOf: fetched.filter { !Self.repeats($0, of: findings) })
        }

        if serving.isLoopback {
            findings = findings.map { finding in
                guard finding.code == "url.loopback" else { return finding }
                var note = finding
                note.severity = .note
                note.message +=
                    " (served on loopback as asked with --bind: fine for the emulator on this machine, not for a real device)"
                return note
            }
        }

        // 6. Verdict per device.
        var deviceReports: [DeviceReadiness] = []
        let itemWide = findings
        if let probe {
            for var verdict in DeviceJudge().verdicts(for: probe, devices: devices) {
                // A speaker playing a video's sound is what its owner expects, not a problem with the item.
                verdict.reasons = verdict.reasons.map { reason in
                    guard reason.code == "device.audio-only" else { return reason }
                    var note = reason
                    note.severity = .note
                    return note
                }
                if extractedEmbedded {
                    // The embedded text is cast as side-loaded WebVTT, so the receiver shows it after all.
                    verdict.reasons = verdict.reasons.map { reason in
                        guard reason.code == "device.embedded-subtitles" else { return reason }
                        var note = reason
                        note.severity = .note
                        note.message +=
                            "; CastPrep extracted it to a side-loaded WebVTT track, which the receiver renders"
                        return note
                    }
                }
                let reasons = itemWide + verdict.reasons
                deviceReports.append(
                    DeviceReadiness(
                        device: verdict.device.id, name: verdict.device.name,
                        readiness: Readiness(worstOf: reasons), reasons: verdict.reasons, fix: verdict.fix))
                if let fix = verdict.fix, !fixes.contains(fix) { fixes.append(fix) }
            }
        } else {
            for device in devices {
                deviceReports.append(
                    DeviceReadiness(
                        device: device.id, name: device.name, readiness: Readiness(worstOf: itemWide), reasons: []))
            }
        }
        for finding in findings.sorted(by: { $0.severity > $1.severity }) {
            if let fix = finding.fix, !fixes.contains(fix) { fixes.append(fix) }
        }
        if applyFixes, let probe, let source = builder.preferredSource(of: original),
            let local = LocalServing.filePath(of: source.url),
            let fixed = await applyFix(for: original, from: local, probe: probe, findings: &findings)
        {
            var repaired = original
            if let index = repaired.sources.firstIndex(of: source) {
                repaired.sources[index] = MediaSource(
                    kind: source.kind, url: URL(fileURLWithPath: fixed.path).absoluteString)
            }
            var again = self
            again.applyFixes = false
            var result = await again.inspect(repaired, catalogFindings: catalogFindings)
            result.report.diagnostics.insert(fixed.note, at: 0)
            return result
        }
        let readiness = deviceReports.map(\.readiness).max() ?? Readiness(worstOf: findings)
        // Built once for both of its texts.
        // (Not `media == nil ? nil : …`: JSONValue is expressible by the nil literal, so that
        // `nil` would be JSON null.)
        let queueValue = load.media.map { _ in queueItem.jsonValue }
        let report = ItemReport(
            id: item.id, index: item.index, title: item.title, subtitle: item.subtitle,
            contentID: load.media?.contentID,
            contentType: load.media?.contentType, streamType: load.media?.streamType?.rawValue,
            duration: load.media?.duration,
            mediaSummary: probe.map(Self.summary(of:)), poster: poster,
            hasVideo: probe.map { !$0.videoStreams.isEmpty }
                ?? Self.hasVideo(contentType: load.media?.contentType, url: load.media?.contentID),
            tracks: tracks, diagnostics: findings,
            devices: deviceReports, readiness: readiness, fixes: fixes)
        return InspectedItem(
            report: report,
            loadJSON: load.media == nil ? nil : loadText,
            queueItemJSON: queueValue.map { JSONWriter(indentWidth: nil).string(from: $0) },
            queueItemPrettyJSON: queueValue.map { JSONWriter(indentWidth: 2).string(from: $0) },
            catalogEntryJSON: JSONWriter(indentWidth: nil).string(
                from: CorrectedCatalog.entry(for: item, media: load.media, mark: PreflightMark(report))))
    }

    /// The LOAD's wire JSON as `JSONWriter.compact` writes its `jsonValue`, without building it.
    static func compactJSON(of load: LoadRequest) -> String {
        var bytes = ByteBuffer(minimumCapacity: 1024)
        load.writeCompactJSON(into: &bytes)
        return bytes.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `finding` says again what one of `earlier` says about the same URL: the same
    /// code, or the fetch's loopback note beside the validator's loopback error.
    static func repeats(_ finding: Diagnostic, of earlier: [Diagnostic]) -> Bool {
        guard let url = finding.url else { return false }
        let code = finding.code == "http.loopback-url" ? "url.loopback" : finding.code.rawValue
        return earlier.contains { $0.url == url && $0.code.rawValue == code }
    }

    /// Converts one side-loaded track to WebVTT in the output folder (local files and any
    /// non-WebVTT format); WebVTT already on a server is left where it is and checked there.
    private func convert(_ track: CaptionTrack, index: Int, of item: CatalogItem, findings: inout [Diagnostic])
        async -> (CaptionTrack, TrackReport)
    {
        var report = TrackReport(
            trackID: index + 1, language: track.language, name: track.name, kind: track.kind.rawValue,
            source: track.url, format: track.format)
        guard let path = LocalServing.filePath(of: track.url) else {
            if track.castContentType == nil {
                findings.append(
                    Diagnostic(
                        .error, "captions.remote-not-webvtt",
                        "caption track \(track.url) is \(track.format ?? "an unknown format"), which the receiver cannot render",
                        fix: "convert it: castprep captions convert FILE -o FILE.vtt, and publish the .vtt",
                        location: item.location, path: item.path, url: track.url))
            }
            return (track, report)
        }
        guard let data = await BlockingWork.contents(of: path) else {
            findings.append(
                Diagnostic(
                    .error, "captions.file-missing", "caption file \(path) cannot be read",
                    fix: "fix the path in the catalog or restore the file", location: item.location, path: item.path))
            return (track, report)
        }
        let format = CaptionFormat.detect(fileExtension: track.format, data: data) ?? .srt
        report.format = format.rawValue
        let name = OutputNames.caption(itemID: item.id, index: index, language: track.language)
        let output = outputDirectory + "/" + name
        guard await mayWrite(name, for: item, findings: &findings) else { return (track, report) }
        do {
            let conversion = try await BlockingWork.run {
                try CaptionConverter.convert(
                    data: data, format: format, readOptions: CaptionReadOptions(fileName: path))
            }
            try await BlockingWork.run {
                try CaptionFileWriter.write(bytes: Array(conversion.webVTT.utf8), to: output, inputs: [path])
            }
            await recordWritten(name)
            findings.append(contentsOf: conversion.report.diagnostics.filter { $0.severity >= .warning })
            if format != .webVTT {
                findings.append(
                    Diagnostic(
                        .warning, "captions.not-webvtt",
                        "caption track \(path) is \(format.rawValue.uppercased()), which the receiver cannot render; converted to \(name) (\(conversion.report.summary))",
                        fix:
                            "publish \(name) from the output folder and point the catalog at it (the corrected catalog.json does)",
                        location: item.location, path: item.path))
            }
            report.cues = conversion.report.cuesWritten
            report.webVTT = name
            var converted = track
            converted.url = URL(fileURLWithPath: output).absoluteString
            converted.format = "vtt"
            return (converted, report)
        } catch let error as CaptionError {
            findings.append(
                Diagnostic(
                    .error, error.code, "caption track \(path): \(error.message)", fix: error.fix,
                    location: error.location ?? item.location, path: item.path))
        } catch {
            findings.append(
                Diagnostic(
                    .error, "captions.write-failed", "cannot write \(output): \(error)",
                    fix: "make the output folder writable", location: item.location, path: item.path))
        }
        return (track, report)
    }

    /// Text subtitle streams inside local media become side-loaded WebVTT tracks, because the
    /// receiver only renders embedded text in HLS/DASH, never in a progressive file.
    private func extractEmbedded(from path: String, item: CatalogItem, existing: Int, findings: inout [Diagnostic])
        async -> [(CaptionTrack, TrackReport)]
    {
        var result: [(CaptionTrack, TrackReport)] = []
        guard let streams = try? await EmbeddedSubtitleExtractor.subtitleStreams(path: path) else { return [] }
        for stream in streams {
            var report = TrackReport(
                trackID: existing + result.count + 1, language: stream.language, name: stream.title,
                kind: TextTrackType.subtitles.rawValue, source: "stream \(stream.index)", format: stream.codecName)
            guard stream.isText else {
                findings.append(
                    Diagnostic(
                        .warning, "captions.bitmap-stream",
                        "stream \(stream.index) (\(stream.codecName)) holds bitmap subtitles; WebVTT needs text, so it is not cast",
                        fix: "provide a text subtitle file (SRT, WebVTT, TTML) for it", location: item.location,
                        path: item.path))
                continue
            }
            let name = OutputNames.caption(
                itemID: item.id, index: existing + result.count, language: stream.language, stream: stream.index)
            let output = outputDirectory + "/" + name
            guard await mayWrite(name, for: item, findings: &findings) else { continue }
            do {
                let read = try await EmbeddedSubtitleExtractor.extract(path: path, stream: stream.index)
                let conversion = try await BlockingWork.run { try CaptionConverter.convert(read, fileName: path) }
                try await BlockingWork.run {
                    try CaptionFileWriter.write(bytes: Array(conversion.webVTT.utf8), to: output, inputs: [path])
                }
                await recordWritten(name)
                report.cues = conversion.report.cuesWritten
                report.webVTT = name
                let track = CaptionTrack(
                    url: URL(fileURLWithPath: output).absoluteString, language: stream.language,
                    name: stream.title ?? stream.language.map { "\($0) (embedded)" }, format: "vtt")
                result.append((track, report))
            } catch {
                findings.append(
                    Diagnostic(
                        .warning, "captions.embedded-failed",
                        "stream \(stream.index) of \(path) could not be extracted: \(error)",
                        fix: "extract it by hand: castprep captions convert \(path) --stream \(stream.index)",
                        location: item.location, path: item.path))
            }
        }
        return result
    }

    /// Runs the most thorough ffmpeg fix any selected device needs on a local file, writing
    /// `fixed/ID.mp4` in the output folder; nil when nothing needs fixing or ffmpeg failed.
    /// ffmpeg writes to `fixed/ID.mp4.partial`, renamed only when it succeeds, and stops at the
    /// first damaged packet (`-xerror`), so a truncated input never leaves a half copy; a
    /// failure is an error finding with ffmpeg's last lines, and the original is cast.
    private func applyFix(for item: CatalogItem, from path: String, probe: ProbeResult, findings: inout [Diagnostic])
        async -> (path: String, note: Diagnostic)?
    {
        let verdicts = DeviceJudge().verdicts(for: probe, devices: devices)
        guard
            let chosen = verdicts.filter({ $0.fixArguments != nil })
                .max(by: {
                    $0.reasons.filter { $0.severity >= .warning }.count
                        < $1.reasons.filter { $0.severity >= .warning }.count
                }),
            var arguments = chosen.fixArguments, arguments.count > 3
        else { return nil }
        let ext = URLSyntax.pathExtension(of: arguments[arguments.count - 1]) ?? "mp4"
        let name = "fixed/\(OutputNames.safe(item.id)).\(ext)"
        let output = outputDirectory + "/" + name
        // A catalog corrected by an earlier --fix run points at the fixed copy itself.
        if (try? await BlockingWork.run { CaptionFileWriter.isSameFile(output, as: path) }) ?? true {
            findings.append(
                Diagnostic(
                    .note, "preflight.fix-skipped",
                    "--fix: \(path) is the fixed copy \(name) itself; it is cast as it is",
                    fix: "run --fix on the original catalog, or write the outputs to another folder with -o DIR",
                    location: item.location, path: item.path))
            return nil
        }
        guard await mayWrite(name, for: item, severity: .warning, findings: &findings) else { return nil }
        let partial = output + ".partial"
        // The partial name hides the format from ffmpeg, so it is named.
        let muxer =
            ["mp4": "mp4", "m4a": "ipod", "ts": "mpegts", "webm": "webm", "mkv": "matroska"][ext.lowercased()] ?? "mp4"
        arguments[arguments.count - 1] = partial
        arguments.insert(contentsOf: ["-f", muxer], at: arguments.count - 1)
        arguments.insert(contentsOf: ["-nostdin", "-hide_banner", "-loglevel", "error", "-xerror", "-y"], at: 1)
        let command = arguments
        let run: FixRun
        do {
            run = try await BlockingWork.run { try FixRun.execute(command, partial: partial, output: output) }
        } catch {
            run = FixRun(status: -1, errorTail: "ffmpeg did not start: \(error)")
        }
        guard run.status == 0 else {
            let lines = run.errorTail.split(whereSeparator: \.isNewline).suffix(FixRun.keptLines).joined(
                separator: "\n  ")
            let finding = Diagnostic(
                .error, "preflight.fix-failed",
                "--fix: ffmpeg could not fix \(path) (exit status \(run.status)); nothing was written to \(name):\n  \(lines.isEmpty ? "(no error output)" : lines)",
                fix: "repair or re-export the source file, then run the fix: \(chosen.fix ?? "")",
                location: item.location, path: item.path)
            findings.insert(finding, at: 0)
            return nil
        }
        await recordWritten(name)
        let note = Diagnostic(
            .note, "preflight.fixed", "--fix: cast \(name), made from \(path) with: \(chosen.fix ?? "")",
            location: item.location, path: item.path)
        return (output, note)
    }

    /// Probes `path` (a local file or a URL). A local file this run has probed already under
    /// any name with the same extension (a hard link, the same path twice) gets that answer,
    /// with its own path as the source; an HLS playlist or DASH manifest, whose answer depends
    /// on the files beside it, and a failure, whose message names the path, are probed again.
    /// A URL goes through ``remoteProbes``, which answers one serving the same bytes as one
    /// probed before.
    /// The memo remote probes go through: the prober's own when it has one, else the run's.
    private var remoteMemo: RemoteProbeMemo { prober.remoteMemo ?? remoteProbes }

    private func probeSource(_ path: String, key: LocalFileKey?, fetched: FetchedMediaStart? = nil) async
        -> Result<ProbeResult, ProbeError>
    {
        var remote = prober
        remote.remoteMemo = remoteMemo
        let prober = prober
        guard let key else {
            let fetchedKey = fetched?.probeKey(url: path, sizeLimit: remoteMemo.sizeLimit)
            return await remote.probe(path: path, fetched: fetchedKey)
        }
        let answer = await localProbes.value(for: key) { await prober.probe(path: path) }
        if answer.isOwn { return answer.value }
        guard case .success(var result) = answer.value, result.hls == nil, result.dash == nil else {
            return await prober.probe(path: path)
        }
        result.source = path
        return .success(result)
    }

    /// The poster frame of a local file as JPEG, made once per file in the run (see
    /// ``probeSource(_:key:)``); a failure is tried again so its message names this path.
    private func posterFrame(of path: String, key: LocalFileKey?) async -> Result<[UInt8], any Error> {
        let make: @Sendable () async -> Result<[UInt8], any Error> = {
            do {
                return .success(try await BlockingWork.run { try PosterFrame(maximumWidth: 480).jpeg(from: path) })
            } catch {
                return .failure(error)
            }
        }
        guard let key else { return await make() }
        let answer = await localPosters.value(for: key, work: make)
        if answer.isOwn { return answer.value }
        guard case .success = answer.value else { return await make() }
        return answer.value
    }

    /// Writes the item's poster frame into `posters/`, named by its content: items whose
    /// frames are the same image (one file linked under several names, a shared opening)
    /// share one file, written once per run.
    private func writePoster(
        for item: CatalogItem, from path: String, key: LocalFileKey?, findings: inout [Diagnostic]
    ) async -> String? {
        let jpeg: [UInt8]
        switch await posterFrame(of: path, key: key) {
        case .success(let bytes): jpeg = bytes
        case .failure(let error):
            findings.append(
                Diagnostic(
                    .note, "preflight.poster-failed", "no poster frame for \(path): \(error)", location: item.location))
            return nil
        }
        let name = OutputNames.poster(content: jpeg)
        // Another item of this run has written it, or is writing it now.
        guard writtenPosters.claim(name) else { return name }
        guard await mayWrite(name, for: item, severity: .warning, findings: &findings) else {
            writtenPosters.release(name)
            return nil
        }
        do {
            // Never over the media or one of the item's own images (an image kept in posters/).
            let inputs = [path] + item.images.compactMap { LocalServing.filePath(of: $0.url) }
            let output = outputDirectory + "/" + name
            try await BlockingWork.run { try CaptionFileWriter.write(bytes: jpeg, to: output, inputs: inputs) }
            await recordWritten(name)
            return name
        } catch {
            writtenPosters.release(name)
            findings.append(
                Diagnostic(
                    .note, "preflight.poster-failed", "no poster frame for \(path): \(error)", location: item.location))
            return nil
        }
    }

    /// Whether `name` (relative to the output folder) may be written: nothing is there, or a
    /// file preflight wrote. Otherwise the refusal, naming the file, is a finding: an error for
    /// a caption track (it is not cast), a warning for a poster or a fixed copy (the item is
    /// cast without them).
    private func mayWrite(
        _ name: String, for item: CatalogItem, severity: Diagnostic.Severity = .error, findings: inout [Diagnostic]
    ) async -> Bool {
        guard let manifest else { return true }
        if (try? await BlockingWork.run { manifest.mayReplace(name) }) == true { return true }
        let (message, fix) = manifest.refusal(name)
        findings.append(
            Diagnostic(
                severity, OutputManifest.notOursCode, message, fix: fix, location: item.location, path: item.path))
        return false
    }

    /// Notes that preflight wrote `name` (one stat, off the cooperative pool).
    private func recordWritten(_ name: String) async {
        guard let manifest else { return }
        _ = try? await BlockingWork.run { manifest.record(name) }
    }

    private func located(_ diagnostic: Diagnostic, _ item: CatalogItem) -> Diagnostic {
        var located = diagnostic
        if located.location == nil { located.location = item.location }
        if located.path == nil { located.path = item.path }
        return located
    }

    /// Whether media that was not probed has pictures, as its content type or else its URL's
    /// extension says: a `video/` type or a video codec listed; nil when neither tells.
    static func hasVideo(contentType: String?, url: String?) -> Bool? {
        let declared = contentType.flatMap { try? MediaType.parse($0).get() }
        if let declared {
            let videoCodecs = ["avc1", "avc3", "hvc1", "hev1", "dvh1", "dvhe", "vp8", "vp09", "vp9", "av01"]
            if declared.codecs.contains(where: { codec in videoCodecs.contains { codec.lowercased().hasPrefix($0) } }) {
                return true
            }
            if !declared.codecs.isEmpty { return false }
            if declared.type == "video" { return true }
            if declared.type == "audio" { return false }
        }
        guard let url, let path = URL(string: url)?.path,
            let implied = CastMediaTypes.contentType(forExtension: (path as NSString).pathExtension)
        else { return nil }
        return implied.hasPrefix("video/") ? true : implied.hasPrefix("audio/") ? false : nil
    }

    static func summary(of probe: ProbeResult) -> String {
        var parts = [probe.container]
        if let video = probe.videoStreams.first {
            var text = video.codecString ?? video.codec
            if let width = video.width, let height = video.height { text += " \(width)×\(height)" }
            if let depth = video.bitDepth, depth > 8 { text += " \(depth)-bit" }
            parts.append(text)
        }
        for audio in probe.audioStreams.prefix(2) { parts.append(audio.codecString ?? audio.codec) }
        if let hls = probe.hls, !hls.variants.isEmpty {
            parts.append("\(hls.variants.count) variant\(hls.variants.count == 1 ? "" : "s")")
        }
        return parts.joined(separator: ", ")
    }
}

/// The poster frames a run has written, by name, so that items showing the same image write
/// its file once.
final class WrittenPosters: Sendable {
    private let names = Mutex<Set<String>>([])

    /// True the first time `name` is claimed: the caller writes the file.
    func claim(_ name: String) -> Bool { names.withLock { $0.insert(name).inserted } }

    /// Gives `name` up after a failed write, so the next item showing it tries again.
    func release(_ name: String) { names.withLock { _ = $0.remove(name) } }
}

/// One run of ffmpeg for `--fix`: its exit status and the end of what it wrote to stderr.
struct FixRun: Sendable {
    /// ffmpeg's exit status; -1 when it did not start or its output could not be renamed.
    var status: Int32
    /// The last bytes of stderr (at most ``keptBytes``): a damaged input can make ffmpeg
    /// print an error per packet, so only the end is kept.
    var errorTail: String

    static let keptBytes = 16 * 1024
    /// Lines of ffmpeg's error output a failure finding quotes.
    static let keptLines = 6

    /// Runs `arguments` (through `/usr/bin/env`, so `ffmpeg` is found on PATH) writing to
    /// `partial`; renames it to `output` on success and removes it on failure. Blocks: call
    /// through ``BlockingWork``.
    static func execute(_ arguments: [String], partial: String, output: String) throws -> FixRun {
        try FileManager.default.createDirectory(
            atPath: (output as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            FileSystem.removeFile(at: partial)
            throw error
        }
        var tail: [UInt8] = []
        while true {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            tail.append(contentsOf: chunk)
            if tail.count > keptBytes { tail.removeFirst(tail.count - keptBytes) }
        }
        process.waitUntilExit()
        var run = FixRun(status: process.terminationStatus, errorTail: String(decoding: tail, as: UTF8.self))
        if process.terminationReason == .uncaughtSignal {
            run.status = -1
            run.errorTail += "\nffmpeg was stopped by signal \(process.terminationStatus)"
        }
        if run.status == 0 {
            do {
                try FileSystem.rename(partial, to: output)
            } catch {
                run.status = -1
                run.errorTail += "\ncannot rename \(partial) to \(output): \(error.reason)"
            }
        }
        if run.status != 0 { FileSystem.removeFile(at: partial) }
        return run
    }
}

/// File names inside the output folder, stable across runs so a cached result still points
/// at its files.
enum OutputNames {
    static func caption(itemID: String, index: Int, language: String?, stream: Int? = nil) -> String {
        var name = "captions/\(safe(itemID))-\(index + 1)"
        if let stream { name += "-s\(stream)" }
        if let language, !language.isEmpty { name += ".\(safe(language))" }
        return name + ".vtt"
    }

    /// A poster frame's name: a 64-bit FNV-1a hash of its JPEG bytes, so one image is one
    /// file however many items show it. (Not a defence against crafted collisions, which
    /// would only show one item's frame on another's card.)
    static func poster(content: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in content {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "posters/" + String(repeating: "0", count: 16 - hex.count) + hex + ".jpg"
    }

    /// Keeps letters, digits, `-`, `_` and `.`; anything else (slashes, `..`) becomes `_`, so
    /// an item id can never name a file outside the output folder.
    static func safe(_ text: String) -> String {
        var out = String(
            text.unicodeScalars.prefix(80).map { scalar -> Character in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "-", "_": Character(scalar)
                default: "_"
                }
            })
        if out.isEmpty { out = "_" }
        return out
    }
}
