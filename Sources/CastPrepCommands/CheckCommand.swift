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
                response headers that show it and the fix; identical findings on one host (a segment ladder without \
                CORS) are printed once, listing their URLs, and each URL's line names its findings' codes; --fix-config prints the server configuration that fixes \
                what was found. Exit status 1 when an error-level finding exists.
                """,
            options: [
                .option(
                    "origin", valueName: "origin", help: "The receiver page's origin, sent as Origin.",
                    default: ReceiverFetchChecker.defaultOrigin),
                .repeating(
                    "track", valueName: "url",
                    help: "A side-loaded text track of the media (makes CORS required on the media too)."),
                .repeating("image", valueName: "url", help: "An artwork image of the media."),
                .option(
                    "content-type", valueName: "type",
                    help: "The contentType the LOAD (or the probe) gives the media URLs."),
                .flag(
                    "credentials",
                    help: "The receiver sends cookies (a custom receiver with withCredentials): * is refused."),
                .option(
                    "segments", valueName: "which",
                    help: "Which segments to fetch from each playlist or representation.",
                    allowedValues: SegmentSampling.allCases.map(\.rawValue), default: "sample"),
                .option(
                    "fix-config", valueName: "server", help: "Print configuration that fixes the findings.",
                    allowedValues: FixConfigFormat.allCases.map(\.rawValue)),
                .option(
                    "timeout", valueName: "seconds", help: "Give up on one request after this long.", default: "10"),
                .option(
                    "total-timeout", valueName: "seconds", help: "Give up on the whole check after this long.",
                    default: "120"),
                .option("per-host", valueName: "n", help: "Requests at once per host.", default: "6"),
                .option(
                    "cacert", valueName: "file",
                    help:
                        "Trust the CA certificates in this PEM file (a private CA; Cast devices trust only public ones)."
                ),
                .flag("allow-loopback", help: "Do not note loopback URLs (the receiver runs on this machine)."),
                .flag("json", help: "Print one JSON document with every result and finding."),
                CommonOptions.color,
            ],
            arguments: [
                ArgumentSpec(
                    name: "url", help: "Media, manifest, track or image URLs (http or https).", arity: .oneOrMore)
            ],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let timeout = try values.number("timeout", in: 0.1...3600) ?? 10
        let totalTimeout = try values.number("total-timeout", in: 0.1...86_400) ?? 120
        let perHost = try values.integer("per-host", in: 1...64) ?? 6
        let origin = values.option("origin") ?? ReceiverFetchChecker.defaultOrigin
        guard let originURL = WebURL(origin), originURL.target == "/" else {
            throw values.usageError(
                "--origin must be a scheme and host such as https://www.gstatic.com, not '\(origin)'",
                concerning: "origin")
        }
        if values.flag("json"), values.option("fix-config") != nil {
            throw values.usageError("--json and --fix-config cannot be used together")
        }
        let tracks = values.options("track")
        let contentType = values.option("content-type")
        var targets = values.arguments("url").map { url in
            CheckTarget(
                url: url,
                kind: tracks.isEmpty && contentType == nil
                    ? .automatic : .media(contentType: contentType, hasTracks: !tracks.isEmpty))
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
            transport: HTTPTransport(
                limits: TransportLimits(connectionsPerHost: perHost), certificateAuthorities: values.option("cacert")))
        let started = ContinuousClock.now
        let report = await checker.check(targets, origin: originURL.origin, options: options)
        let elapsed = ContinuousClock.now - started

        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        if values.flag("json") {
            io.writeLine(JSONWriter.pretty.string(from: json(report)))
        } else if let format = values.option("fix-config").flatMap(FixConfigFormat.init(rawValue:)) {
            io.write(FixConfigGenerator.configuration(for: report, format: format))
        } else {
            io.write(render(report.results, findings: report.findings))
        }
        let groups = FindingGroup.grouping(report.findings)
        if !groups.isEmpty {
            io.writeError(groups.map { $0.rendered(colored: printer.colored) + "\n" }.joined())
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        io.writeErrorLine(
            "castprep: \(report.results.count) URL\(report.results.count == 1 ? "" : "s") checked with \(report.requestCount) request\(report.requestCount == 1 ? "" : "s") in \((seconds * 100).rounded() / 100) s; \(DiagnosticPrinter.tally(report.diagnostics))"
        )
        return report.hasErrors ? 1 : 0
    }

    /// One line per URL: verdict, status, role, URL, then the codes of its findings.
    static func render(_ results: [ResourceResult], findings: [HTTPFinding]) -> String {
        var codes: [String: [DiagnosticCode]] = [:]
        for finding in findings {
            guard let url = finding.diagnostic.url else { continue }
            if !codes[url, default: []].contains(finding.diagnostic.code) {
                codes[url, default: []].append(finding.diagnostic.code)
            }
        }
        var text = ""
        for result in results {
            let verdict =
                switch result.worstSeverity {
                case .error?: "ERROR  "
                case .warning?: "warning"
                case .note?: "note   "
                case nil: "ok     "
                }
            let status = result.status.map(String.init) ?? "---"
            var line = "\(verdict) \(status) \(result.kind.rawValue.padding(to: 20)) \(result.url)"
            if let range = result.byteRange { line += " [\(range)]" }
            if let final = result.finalURL { line += " → \(final)" }
            var found = codes[result.url] ?? []
            for code in result.finalURL.flatMap({ codes[$0] }) ?? [] where !found.contains(code) { found.append(code) }
            if !found.isEmpty { line += "  " + found.map { "[\($0.rawValue)]" }.joined(separator: " ") }
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
        return JSONEnvelope.document(
            kind: "castprep.check",
            body: [
                "origin": .string(report.origin),
                "credentials": .bool(report.usesCredentials),
                "results": .array(
                    report.results.map { result in
                        var members: [String: JSONValue] = [
                            "url": .string(result.url), "kind": .string(result.kind.rawValue),
                            "corsRequired": .bool(result.requiresCORS),
                            "requests": JSONValue(result.exchanges.count),
                            "severity": result.worstSeverity.map { .string($0.rawValue) } ?? .null,
                        ]
                        if let parent = result.parent { members["parent"] = .string(parent) }
                        if let status = result.status { members["status"] = JSONValue(status) }
                        if let final = result.finalURL { members["finalUrl"] = .string(final) }
                        if let type = result.contentType { members["contentType"] = .string(type) }
                        if let length = result.length { members["length"] = JSONValue(length) }
                        if let range = result.byteRange { members["range"] = .string(range.description) }
                        if let seconds = result.firstByteSeconds {
                            members["firstByteMilliseconds"] = JSONValue(Int((seconds * 1000).rounded()))
                        }
                        return .object(members)
                    }),
                "diagnostics": .array(
                    report.findings.map { finding in
                        guard case .object(var members) = DiagnosticJSON.encode(finding.diagnostic) else {
                            return .null
                        }
                        if let exchange = finding.exchange { members["evidence"] = json(exchange) }
                        if let kind = finding.resourceKind { members["resourceKind"] = .string(kind.rawValue) }
                        return .object(members)
                    }),
                "summary": [
                    "urls": JSONValue(report.results.count), "requests": JSONValue(report.requestCount),
                    "errors": JSONValue(errors),
                    "warnings": JSONValue(warnings), "notes": JSONValue(notes),
                ],
            ])
    }

    static func json(_ exchange: HTTPExchange) -> JSONValue {
        func headers(_ list: HTTPHeaders) -> JSONValue {
            .array(list.fields.map { ["name": .string($0.name), "value": .string($0.value)] })
        }
        var request: [String: JSONValue] = [
            "method": .string(exchange.method.rawValue), "url": .string(exchange.url),
            "headers": headers(exchange.requestHeaders),
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

/// Identical findings on one host, said once: the same code, severity, message and fix on
/// several URLs (a segment ladder without CORS) print as one finding listing the URLs, with
/// the request and response of the first as evidence.
struct FindingGroup {
    /// The first finding of the group, whose message, fix and evidence are printed.
    var finding: HTTPFinding
    /// Every URL the finding was made on, in the order found.
    var urls: [String]

    /// How many URLs are listed before the rest are counted.
    static let listedURLs = 10

    /// What makes findings identical (a message naming its own URL differs from URL to URL).
    private struct Key: Hashable {
        var host: String?
        var code: DiagnosticCode
        var severity: Diagnostic.Severity
        var message: String
        var fix: String?
        var path: String?
        var location: String?
    }

    /// The groups in the order their first finding comes.
    static func grouping(_ findings: [HTTPFinding]) -> [FindingGroup] {
        var groups: [FindingGroup] = []
        var indices: [Key: Int] = [:]
        var listed: [Int: Set<String>] = [:]
        for finding in findings {
            let diagnostic = finding.diagnostic
            let host = diagnostic.url.flatMap(WebURL.init)?.hostAndPort ?? diagnostic.url
            let key = Key(
                host: host, code: diagnostic.code, severity: diagnostic.severity, message: diagnostic.message,
                fix: diagnostic.fix, path: diagnostic.path?.description,
                location: diagnostic.location?.description)
            if let index = indices[key] {
                // The same finding on the same URL again is said once already.
                if let url = diagnostic.url, listed[index, default: []].insert(url).inserted {
                    groups[index].urls.append(url)
                }
            } else {
                indices[key] = groups.count
                listed[groups.count] = Set(diagnostic.url.map { [$0] } ?? [])
                groups.append(FindingGroup(finding: finding, urls: diagnostic.url.map { [$0] } ?? []))
            }
        }
        return groups
    }

    /// The finding as the printer shows it, its URLs listed when there are several, then the
    /// request and response headers of the first.
    func rendered(colored: Bool) -> String {
        var text: String
        if urls.count > 1 {
            var head = finding.diagnostic
            head.url = nil
            head.fix = nil
            text = head.rendered(colored: colored)
            let label = "    urls (\(urls.count)): "
            let indent = String(repeating: " ", count: label.count)
            for (position, url) in urls.prefix(Self.listedURLs).enumerated() {
                text += "\n" + (position == 0 ? label : indent) + url
            }
            if urls.count > Self.listedURLs {
                text += "\n" + indent + "… and \(urls.count - Self.listedURLs) more (--json lists each)"
            }
            if let fix = finding.diagnostic.fix { text += "\n    fix: \(fix)" }
        } else {
            text = finding.diagnostic.rendered(colored: colored)
        }
        for line in finding.exchange?.evidenceLines ?? [] { text += "\n    " + line }
        return text
    }
}

extension String {
    /// The string padded with spaces to `width` characters (never cut).
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
