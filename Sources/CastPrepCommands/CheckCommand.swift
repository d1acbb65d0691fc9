import CastModel
import CommandParsing
import HTTPCheck
import JSONSupport

/// `castprep check URL…`: fetch URLs the way a Cast receiver does and explain what fails.
enum CheckCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "check",
            abstract: "Check media URLs the way a Cast receiver fetches them: CORS, Range, status, types, redirects.",
            discussion: """
                Sends the requests a receiver's Chromium makes — GET with Origin (and Range for media), OPTIONS \
                preflights where the player sends Range — follows redirects hop by hop, and walks HLS and DASH \
                manifests to every variant and rendition playlist, a sample of segments (first, middle and last), \
                keys and initialisation segments. CORS is required for manifests, segments, keys and text tracks, \
                and for progressive media once the LOAD has --track text tracks. Each finding names the request and \
                response headers that show it and the fix; --fix-config prints the server configuration that fixes \
                what was found. Exit status 1 when an error-level finding exists.
                """,
            options: [
                .option("origin", valueName: "origin", help: "The receiver page's origin, sent as Origin.", default: ReceiverFetchChecker.defaultOrigin),
                .repeating("track", valueName: "url", help: "A side-loaded text track of the media (makes CORS required on the media too)."),
                .repeating("image", valueName: "url", help: "An artwork image of the media."),
                .option("content-type", valueName: "type", help: "The contentType the LOAD (or the probe) gives the media URLs."),
                .flag("credentials", help: "The receiver sends cookies (a custom receiver with withCredentials): * is refused."),
                .option("segments", valueName: "which", help: "Which segments to fetch from each playlist or representation.",
                        allowedValues: SegmentSampling.allCases.map(\.rawValue), default: "sample"),
                .option("fix-config", valueName: "server", help: "Print configuration that fixes the findings.",
                        allowedValues: FixConfigFormat.allCases.map(\.rawValue)),
                .option("timeout", valueName: "seconds", help: "Give up on one request after this long.", default: "10"),
                .option("total-timeout", valueName: "seconds", help: "Give up on the whole check after this long.", default: "120"),
                .option("per-host", valueName: "n", help: "Requests at once per host.", default: "6"),
                .option("cacert", valueName: "file", help: "Trust the CA certificates in this PEM file (a private CA; Cast devices trust only public ones)."),
                .flag("allow-loopback", help: "Do not note loopback URLs (the receiver runs on this machine)."),
                .flag("json", help: "Print one JSON document with every result and finding."),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "url", help: "Media, manifest, track or image URLs (http or https).", arity: .oneOrMore)],
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let timeout = try values.number("timeout", in: 0.1...3600) ?? 10
        let totalTimeout = try values.number("total-timeout", in: 0.1...86_400) ?? 120
        let perHost = try values.integer("per-host", in: 1...64) ?? 6
        let origin = values.option("origin") ?? ReceiverFetchChecker.defaultOrigin
        guard let originURL = WebURL(origin), originURL.target == "/" else {
            throw values.usageError("--origin must be a scheme and host such as https://www.gstatic.com, not '\(origin)'", concerning: "origin")
        }
        if values.flag("json"), values.option("fix-config") != nil {
            throw values.usageError("--json and --fix-config cannot be used together")
        }
        let tracks = values.options("track")
        let contentType = values.option("content-type")
        var targets = values.arguments("url").map { url in
            CheckTarget(url: url, kind: tracks.isEmpty && contentType == nil ? .automatic : .media(contentType: contentType, hasTracks: !tracks.isEmpty))
        }
        targets += tracks.map { CheckTarget(url: $0, kind: .textTrack(contentType: nil)) }
        targets += values.options("image").map { CheckTarget(url: $0, kind: .image) }
        let options = CheckOptions(
            segmentSampling: values.option("segments").flatMap(SegmentSampling.init(rawValue:)) ?? .sample,
            requestTimeout: .milliseconds(Int(timeout * 1000)), totalTimeout: .milliseconds(Int(totalTimeout * 1000)),
            usesCredentials: values.flag("credentials"), allowsLoopback: values.flag("allow-loopback"))
        do {
            try await HTTPTransport.requireLibrary()
        } catch {
            DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values)).print([error.diagnostic])
            return 1
        }
        let checker = ReceiverFetchChecker(
            transport: HTTPTransport(limits: TransportLimits(connectionsPerHost: perHost), certificateAuthorities: values.option("cacert")))
        let started = ContinuousClock.now
        let report = await checker.check(targets, origin: originURL.origin, options: options)
        let elapsed = ContinuousClock.now - started

        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        if values.flag("json") {
            io.writeLine(JSONWriter.pretty.string(from: json(report)))
        } else if let format = values.option("fix-config").flatMap(FixConfigFormat.init(rawValue:)) {
            io.write(FixConfigGenerator.configuration(for: report, format: format))
        } else {
            io.write(render(report.results))
        }
        printer.print(report.findings.map(\.diagnostic), evidence: Dictionary(
            report.findings.map { ($0.diagnostic, $0.exchange?.evidenceLines ?? []) }, uniquingKeysWith: { first, _ in first }))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        io.writeErrorLine(
            "castprep: \(report.results.count) URL\(report.results.count == 1 ? "" : "s") checked with \(report.requestCount) request\(report.requestCount == 1 ? "" : "s") in \((seconds * 100).rounded() / 100) s; \(DiagnosticPrinter.tally(report.diagnostics))")
        return report.hasErrors ? 1 : 0
    }

    /// One line per URL: verdict, status, role, URL.
    static func render(_ results: [ResourceResult]) -> String {
        var text = ""
        for result in results {
            let verdict = switch result.worstSeverity {
            case .error?: "ERROR  "
            case .warning?: "warning"
            case .note?: "note   "
            case nil: "ok     "
            }
            let status = result.status.map(String.init) ?? "---"
            var line = "\(verdict) \(status) \(result.kind.rawValue.padding(to: 20)) \(result.url)"
            if let range = result.byteRange { line += " [\(range)]" }
            if let final = result.finalURL { line += " → \(final)" }
            text += line + "\n"
        }
        return text
    }

    static func json(_ report: CheckReport) -> JSONValue {
        var errors = 0
        var warnings = 0
        var notes = 0
        for diagnostic in report.diagnostics {
            switch diagnostic.severity {
            case .error: errors += 1
            case .warning: warnings += 1
            case .note: notes += 1
            }
        }
        return [
            "castprep": ["version": .string(CastPrepCLI.version), "format": JSONValue(CastPrepCLI.jsonFormatVersion)],
            "origin": .string(report.origin),
            "credentials": .bool(report.usesCredentials),
            "results": .array(report.results.map { result in
                var members: [String: JSONValue] = [
                    "url": .string(result.url), "kind": .string(result.kind.rawValue), "corsRequired": .bool(result.requiresCORS),
                    "requests": JSONValue(result.exchanges.count),
                    "severity": result.worstSeverity.map { .string($0.rawValue) } ?? .null,
                ]
                if let parent = result.parent { members["parent"] = .string(parent) }
                if let status = result.status { members["status"] = JSONValue(status) }
                if let final = result.finalURL { members["finalURL"] = .string(final) }
                if let type = result.contentType { members["contentType"] = .string(type) }
                if let length = result.length { members["length"] = JSONValue(length) }
                if let range = result.byteRange { members["range"] = .string(range.description) }
                if let seconds = result.firstByteSeconds { members["firstByteMilliseconds"] = JSONValue(Int((seconds * 1000).rounded())) }
                return .object(members)
            }),
            "diagnostics": .array(report.findings.map { finding in
                guard case .object(var members) = DiagnosticJSON.encode(finding.diagnostic) else { return .null }
                if let exchange = finding.exchange { members["evidence"] = json(exchange) }
                if let kind = finding.resourceKind { members["resourceKind"] = .string(kind.rawValue) }
                return .object(members)
            }),
            "summary": [
                "urls": JSONValue(report.results.count), "requests": JSONValue(report.requestCount), "errors": JSONValue(errors),
                "warnings": JSONValue(warnings), "notes": JSONValue(notes),
            ],
        ]
    }

    static func json(_ exchange: HTTPExchange) -> JSONValue {
        func headers(_ list: HTTPHeaders) -> JSONValue {
            .array(list.fields.map { ["name": .string($0.name), "value": .string($0.value)] })
        }
        var request: [String: JSONValue] = [
            "method": .string(exchange.method.rawValue), "url": .string(exchange.url), "headers": headers(exchange.requestHeaders),
        ]
        if exchange.requestHeaders.fields.isEmpty { request["headers"] = .array([]) }
        var members: [String: JSONValue] = ["request": .object(request)]
        if let status = exchange.status, let responseHeaders = exchange.responseHeaders {
            members["response"] = ["status": JSONValue(status), "headers": headers(responseHeaders)]
        }
        if let failure = exchange.failure {
            members["failure"] = ["kind": .string(failure.kind.rawValue), "message": .string(failure.message)]
        }
        return .object(members)
    }
}

extension String {
    /// The string padded with spaces to `width` characters (never cut).
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
