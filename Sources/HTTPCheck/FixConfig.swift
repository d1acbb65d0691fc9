import CastModel

/// The servers `--fix-config` writes configuration for.
public enum FixConfigFormat: String, Sendable, Hashable, CaseIterable {
    case nginx, apache, caddy, s3, gcs, azure
}

/// Writes ready-to-paste server configuration that fixes exactly what a check found, per
/// server (origin) seen.
///
/// Only the directives the findings call for are written: a server whose CORS is right but
/// whose preflight fails gets the OPTIONS answer and nothing else, so pasting the output never
/// duplicates a header the server already sends. Findings no configuration can fix (a 404, a
/// timeout, a certificate) are listed as comments.
public enum FixConfigGenerator {
    /// What one server needs, derived from its findings.
    struct Needs {
        var origin: String
        var allowOrigin = false
        var exposeHeaders = false
        var preflight = false
        var ranges = false
        var types = false
        var removeCredentials = false
        var replaceWildcard = false
        var replaceOrigin = false
        var vary = false
        var credentials = false
        var extensions: Set<String> = []
        /// Extensions of the URLs whose Content-Type was wrong or missing: the types to declare.
        var typeExtensions: Set<String> = []
        /// First path segments of the URLs seen (bucket or container names in path-style URLs).
        var firstSegments: Set<String> = []
        var codes: [DiagnosticCode: Int] = [:]
        var unfixable: [DiagnosticCode: Int] = [:]

        var isEmpty: Bool {
            !(allowOrigin || exposeHeaders || preflight || ranges || types || removeCredentials || replaceWildcard
                || replaceOrigin
                || vary || credentials)
        }
    }

    /// The configuration for `format`, one section per server with findings; a comment saying
    /// nothing needs fixing when there are none.
    public static func configuration(for report: CheckReport, format: FixConfigFormat) -> String {
        let servers = needs(from: report)
        let comment = "#"
        var text = "\(comment) castprep check --fix-config \(format.rawValue) (receiver origin \(report.origin))\n"
        if servers.isEmpty {
            return text + "\(comment) nothing to fix: no finding calls for a configuration change\n"
        }
        for server in servers {
            text += "\n"
            text +=
                "\(comment) \(server.origin): fixes "
                + server.codes.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) (\($0.value))" }
                .joined(separator: ", ") + "\n"
            if !server.unfixable.isEmpty {
                text +=
                    "\(comment) not fixable by configuration: "
                    + server.unfixable.sorted { $0.key < $1.key }
                    .map { "\($0.key.rawValue) (\($0.value))" }.joined(separator: ", ") + "\n"
            }
            guard !server.isEmpty else { continue }
            switch format {
            case .nginx: text += nginx(server, receiverOrigin: report.origin)
            case .apache: text += apache(server, receiverOrigin: report.origin)
            case .caddy: text += caddy(server, receiverOrigin: report.origin)
            case .s3: text += s3(server, receiverOrigin: report.origin)
            case .gcs: text += gcs(server, receiverOrigin: report.origin)
            case .azure: text += azure(server, receiverOrigin: report.origin)
            }
        }
        return text
    }

    static let corsCodes: Set<DiagnosticCode> = [
        HTTPCheckCode.corsMissing, HTTPCheckCode.corsOriginMismatch, HTTPCheckCode.redirectCORSMissing,
        HTTPCheckCode.redirectOriginNull,
    ]
    static let rangeCodes: Set<DiagnosticCode> = [
        HTTPCheckCode.rangeUnsupported, HTTPCheckCode.rangeRefused, HTTPCheckCode.contentRangeInvalid,
        HTTPCheckCode.rangeSuffixUnsupported,
        HTTPCheckCode.rangeUnsatisfiableNot416, HTTPCheckCode.acceptRangesNone,
    ]
    static let preflightCodes: Set<DiagnosticCode> = [
        HTTPCheckCode.preflightFailed, HTTPCheckCode.preflightCORSMissing, HTTPCheckCode.preflightHeadersMissing,
    ]

    /// Groups findings by the origin of their URL and decides what each server needs.
    static func needs(from report: CheckReport) -> [Needs] {
        var servers: [String: Needs] = [:]
        for finding in report.findings {
            guard let text = finding.diagnostic.url, let url = WebURL(text) else { continue }
            let code = finding.diagnostic.code
            var server = servers[url.origin] ?? Needs(origin: url.origin)
            // A note about CORS on progressive media without tracks is worth fixing too: the
            // next LOAD with captions needs it.
            if corsCodes.contains(code) {
                server.allowOrigin = true
                server.exposeHeaders = true
                // The server sends an origin, just not this one: the old header has to go.
                if code == HTTPCheckCode.corsOriginMismatch { server.replaceOrigin = true }
            } else if code == HTTPCheckCode.corsExposeHeadersMissing {
                server.exposeHeaders = true
            } else if preflightCodes.contains(code) {
                server.preflight = true
                if code == HTTPCheckCode.preflightCORSMissing { server.allowOrigin = true }
            } else if rangeCodes.contains(code) {
                server.ranges = true
            } else if code == HTTPCheckCode.contentTypeMismatch || code == HTTPCheckCode.contentTypeMissing {
                server.types = true
                if let ext = url.pathExtension { server.typeExtensions.insert(ext.lowercased()) }
            } else if code == HTTPCheckCode.corsWildcardWithCredentials {
                if report.usesCredentials { server.replaceWildcard = true } else { server.removeCredentials = true }
            } else if code == HTTPCheckCode.corsOriginMultiple {
                server.replaceOrigin = true
            } else if code == HTTPCheckCode.corsVaryMissing {
                server.vary = true
            } else if code == HTTPCheckCode.corsCredentialsMissing {
                server.credentials = true
            } else {
                server.unfixable[code, default: 0] += 1
                servers[url.origin] = server
                continue
            }
            server.codes[code, default: 0] += 1
            servers[url.origin] = server
        }
        for result in report.results {
            guard let url = WebURL(result.url), var server = servers[url.origin] else { continue }
            if let ext = url.pathExtension { server.extensions.insert(ext) }
            if let first = url.path.split(separator: "/").first { server.firstSegments.insert(String(first)) }
            servers[url.origin] = server
        }
        if report.usesCredentials {
            for key in servers.keys where servers[key]?.allowOrigin == true {
                servers[key]?.credentials = true
                servers[key]?.vary = true
            }
        }
        return servers.values.sorted { $0.origin < $1.origin }
    }

    /// MIME types for the media extensions a Cast stream uses.
    static let mediaTypes: [(String, String)] = [
        ("application/vnd.apple.mpegurl", "m3u8"), ("application/dash+xml", "mpd"), ("video/mp2t", "ts"),
        ("video/mp4", "mp4"),
        ("video/mp4", "m4v"), ("video/iso.segment", "m4s"), ("audio/mp4", "m4a"), ("audio/aac", "aac"),
        ("audio/mpeg", "mp3"),
        ("video/webm", "webm"), ("audio/ogg", "ogg"), ("audio/ogg", "opus"), ("audio/flac", "flac"),
        ("audio/wav", "wav"),
        ("text/vtt", "vtt"), ("application/ttml+xml", "ttml"), ("application/ttml+xml", "dfxp"), ("image/jpeg", "jpg"),
        ("image/jpeg", "jpeg"), ("image/png", "png"), ("image/webp", "webp"), ("image/gif", "gif"),
        ("application/octet-stream", "key"),
    ]

    static let exposed = "Content-Length, Content-Range, Accept-Ranges"
    static let allowedHeaders = "Range, Content-Type, Accept-Encoding"
    static let allowedMethods = "GET, HEAD, OPTIONS"

    /// The media types to declare: those of the extensions whose Content-Type was found wrong;
    /// when none had a known extension, those of every URL checked on the server, else the
    /// whole Cast table.
    static func typeTable(_ server: Needs) -> [(String, String)] {
        let needed = mediaTypes.filter { server.typeExtensions.contains($0.1) }
        if !needed.isEmpty { return needed }
        let seen = mediaTypes.filter { server.extensions.contains($0.1) }
        return seen.isEmpty ? mediaTypes : seen
    }

    static func originValue(_ server: Needs, receiverOrigin: String) -> String {
        server.credentials || server.replaceWildcard ? receiverOrigin : "*"
    }

    // MARK: - nginx

    static func nginx(_ server: Needs, receiverOrigin: String) -> String {
        var lines = [
            "# Paste at the end of the server { } block for \(server.origin). Headers at server level reach every",
            "# location that has no add_header of its own; copy them into any location that does.",
        ]
        if server.removeCredentials {
            lines.append(
                "# remove: add_header Access-Control-Allow-Credentials  (the receiver sends no cookies; * with credentials is refused)"
            )
        } else if server.replaceWildcard {
            lines.append(
                "# remove: add_header Access-Control-Allow-Credentials  (set once below; a repeated header is refused)")
        }
        if server.replaceWildcard || server.replaceOrigin {
            lines.append("# remove: add_header Access-Control-Allow-Origin  (replaced below by a single value)")
        }
        let origin = originValue(server, receiverOrigin: receiverOrigin)
        if server.allowOrigin || server.replaceWildcard || server.replaceOrigin {
            lines.append("add_header Access-Control-Allow-Origin \"\(origin)\" always;")
        }
        if server.credentials || server.replaceWildcard {
            lines.append("add_header Access-Control-Allow-Credentials \"true\" always;")
        }
        if server.vary || server.credentials || server.replaceWildcard {
            lines.append("add_header Vary \"Origin\" always;")
        }
        if server.exposeHeaders {
            lines.append("add_header Access-Control-Expose-Headers \"\(exposed)\" always;")
        }
        if server.preflight {
            lines += [
                "add_header Access-Control-Allow-Methods \"\(allowedMethods)\" always;",
                "add_header Access-Control-Allow-Headers \"\(allowedHeaders)\" always;",
                "add_header Access-Control-Max-Age \"86400\" always;",
                "# Answer preflights here, before any location, auth or proxy sees them.",
                "if ($request_method = OPTIONS) {",
                "    return 204;",
                "}",
            ]
        }
        if server.ranges {
            lines += [
                "# Byte ranges: nginx serves them for static files unless \"max_ranges 0\" is set (remove it);",
                "# for proxied responses this makes nginx cut ranges itself.",
                "proxy_force_ranges on;",
            ]
        }
        if server.types {
            // A types block in a context replaces the whole table it inherits (HTML would become
            // the default type), so the stock table is included again in the same context first;
            // a later entry for the same extension overrides the stock one.
            lines += [
                "# Media types: a types block here would replace the table inherited from http { }, so the stock",
                "# table is included again first (mime.types beside nginx.conf), then only the types that were wrong.",
                "include mime.types;",
                "types {",
            ]
            for (type, ext) in typeTable(server) { lines.append("    \(type) \(ext);") }
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Apache

    static func apache(_ server: Needs, receiverOrigin: String) -> String {
        var lines = [
            "# In the <VirtualHost> for \(server.origin), or its .htaccess (mod_headers, mod_rewrite, mod_mime)."
        ]
        var headers: [String] = []
        let origin = originValue(server, receiverOrigin: receiverOrigin)
        if server.allowOrigin || server.replaceWildcard || server.replaceOrigin {
            headers.append("Header always set Access-Control-Allow-Origin \"\(origin)\"")
        }
        if server.removeCredentials { headers.append("Header always unset Access-Control-Allow-Credentials") }
        if server.credentials || server.replaceWildcard {
            headers.append("Header always set Access-Control-Allow-Credentials \"true\"")
        }
        if server.vary || server.credentials || server.replaceWildcard {
            headers.append("Header always merge Vary \"Origin\"")
        }
        if server.exposeHeaders { headers.append("Header always set Access-Control-Expose-Headers \"\(exposed)\"") }
        if server.preflight {
            headers += [
                "Header always set Access-Control-Allow-Methods \"\(allowedMethods)\"",
                "Header always set Access-Control-Allow-Headers \"\(allowedHeaders)\"",
                "Header always set Access-Control-Max-Age \"86400\"",
            ]
        }
        if !headers.isEmpty {
            lines.append("<IfModule mod_headers.c>")
            lines += headers.map { "  " + $0 }
            lines.append("</IfModule>")
        }
        if server.preflight {
            lines += [
                "<IfModule mod_rewrite.c>", "  RewriteEngine On", "  RewriteCond %{REQUEST_METHOD} OPTIONS",
                "  RewriteRule ^ - [R=204,L]",
                "</IfModule>",
            ]
        }
        if server.ranges {
            lines += [
                "# Byte ranges: Apache serves them for static files; remove any 'Header unset Accept-Ranges' or",
                "# 'RequestHeader unset Range', and make a proxied backend (mod_proxy) answer Range itself.",
            ]
        }
        if server.types {
            for (type, ext) in typeTable(server) { lines.append("AddType \(type) .\(ext)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Caddy

    static func caddy(_ server: Needs, receiverOrigin: String) -> String {
        var lines = ["# Inside the site block for \(server.origin) (Caddy 2)."]
        var headers: [String] = []
        let origin = originValue(server, receiverOrigin: receiverOrigin)
        if server.allowOrigin || server.replaceWildcard || server.replaceOrigin {
            headers.append("Access-Control-Allow-Origin \"\(origin)\"")
        }
        if server.removeCredentials { headers.append("-Access-Control-Allow-Credentials") }
        if server.credentials || server.replaceWildcard { headers.append("Access-Control-Allow-Credentials \"true\"") }
        if server.vary || server.credentials || server.replaceWildcard { headers.append("+Vary \"Origin\"") }
        if server.exposeHeaders { headers.append("Access-Control-Expose-Headers \"\(exposed)\"") }
        if server.preflight {
            headers += [
                "Access-Control-Allow-Methods \"\(allowedMethods)\"",
                "Access-Control-Allow-Headers \"\(allowedHeaders)\"",
                "Access-Control-Max-Age \"86400\"",
            ]
        }
        if !headers.isEmpty {
            lines.append("header {")
            lines += headers.map { "    " + $0 }
            lines.append("}")
        }
        if server.preflight {
            lines += ["@castprepPreflight method OPTIONS", "respond @castprepPreflight 204"]
        }
        if server.ranges {
            lines.append("# Byte ranges: file_server serves them; a reverse_proxy backend must answer Range itself.")
        }
        if server.types {
            for (type, ext) in typeTable(server) {
                lines.append("@castprepType_\(ext) path *.\(ext)")
                lines.append("header @castprepType_\(ext) Content-Type \"\(type)\"")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Object stores

    /// The bucket (or storage account) name: the host's prefix for virtual-hosted URLs
    /// (`media.s3.amazonaws.com`), the first path segment for path-style hosts
    /// (`storage.googleapis.com/media/…`), else the host itself (a custom domain names its bucket).
    static func storeName(_ server: Needs, suffixes: [String], pathStyleHosts: [String]) -> String {
        guard let url = WebURL(server.origin) else { return server.origin }
        for suffix in suffixes where url.host.hasSuffix(suffix) && url.host.count > suffix.count {
            return String(url.host.dropLast(suffix.count).split(separator: ".").first ?? "")
        }
        if pathStyleHosts.contains(where: { url.host == $0 || url.host.hasSuffix("." + $0) }),
            let first = server.firstSegments.sorted().first
        {
            return first
        }
        return url.host
    }

    static func corsRule(_ server: Needs, receiverOrigin: String) -> (
        origins: [String], headers: [String], exposed: [String]
    ) {
        let origins = server.credentials || server.replaceWildcard ? [receiverOrigin] : ["*"]
        return (
            origins, ["Range", "Content-Type", "Accept-Encoding"],
            ["Content-Length", "Content-Range", "Accept-Ranges", "ETag"]
        )
    }

    static func jsonList(_ items: [String]) -> String { "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }

    static func s3(_ server: Needs, receiverOrigin: String) -> String {
        var bucket = storeName(server, suffixes: [".amazonaws.com"], pathStyleHosts: [])
        if bucket.hasPrefix("s3"), let first = server.firstSegments.sorted().first { bucket = first }
        var lines = ["# Amazon S3 bucket \(bucket) (S3 answers OPTIONS itself from these rules)."]
        if server.allowOrigin || server.exposeHeaders || server.preflight || server.replaceWildcard
            || server.removeCredentials
            || server.replaceOrigin || server.vary || server.credentials
        {
            let rule = corsRule(server, receiverOrigin: receiverOrigin)
            lines += [
                "aws s3api put-bucket-cors --bucket \(bucket) --cors-configuration '{\"CORSRules\": [{",
                "  \"AllowedOrigins\": \(jsonList(rule.origins)), \"AllowedMethods\": [\"GET\", \"HEAD\"],",
                "  \"AllowedHeaders\": \(jsonList(rule.headers)),",
                "  \"ExposeHeaders\": \(jsonList(rule.exposed)), \"MaxAgeSeconds\": 86400}]}'",
                "# Behind CloudFront, forward the Origin header (or attach a CORS response-headers policy).",
            ]
        }
        if server.ranges { lines.append("# Byte ranges: S3 always serves them; check a proxy or CDN in front of it.") }
        if server.types {
            for (type, ext) in typeTable(server) {
                lines.append(
                    "aws s3 cp s3://\(bucket)/ s3://\(bucket)/ --recursive --exclude '*' --include '*.\(ext)' --content-type '\(type)' --metadata-directive REPLACE"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func gcs(_ server: Needs, receiverOrigin: String) -> String {
        let bucket = storeName(
            server, suffixes: [".storage.googleapis.com"], pathStyleHosts: ["storage.googleapis.com"])
        var lines = [
            "# Google Cloud Storage bucket \(bucket) (use storage.googleapis.com URLs; CORS does not apply to storage.cloud.google.com)."
        ]
        if server.allowOrigin || server.exposeHeaders || server.preflight || server.replaceWildcard
            || server.removeCredentials
            || server.replaceOrigin || server.vary || server.credentials
        {
            let rule = corsRule(server, receiverOrigin: receiverOrigin)
            lines += [
                "cat > cors.json <<'JSON'",
                "[{\"origin\": \(jsonList(rule.origins)), \"method\": [\"GET\", \"HEAD\", \"OPTIONS\"],",
                "  \"responseHeader\": \(jsonList(rule.headers + ["Content-Length", "Content-Range", "Accept-Ranges"])), \"maxAgeSeconds\": 86400}]",
                "JSON",
                "gcloud storage buckets update gs://\(bucket) --cors-file=cors.json",
            ]
        }
        if server.ranges {
            lines.append("# Byte ranges: Cloud Storage always serves them; check a proxy or CDN in front of it.")
        }
        if server.types {
            for (type, ext) in typeTable(server) {
                lines.append("gcloud storage objects update 'gs://\(bucket)/**.\(ext)' --content-type='\(type)'")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func azure(_ server: Needs, receiverOrigin: String) -> String {
        let account = storeName(server, suffixes: [".blob.core.windows.net"], pathStyleHosts: [])
        var lines = ["# Azure Blob Storage account \(account)."]
        if server.allowOrigin || server.exposeHeaders || server.preflight || server.replaceWildcard
            || server.removeCredentials
            || server.replaceOrigin || server.vary || server.credentials
        {
            let rule = corsRule(server, receiverOrigin: receiverOrigin)
            lines += [
                "az storage cors clear --services b --account-name \(account)",
                "az storage cors add --services b --account-name \(account) --methods GET HEAD OPTIONS --origins '\(rule.origins.joined(separator: " "))' --allowed-headers '\(rule.headers.joined(separator: ","))' --exposed-headers '\(rule.exposed.joined(separator: ","))' --max-age 86400",
            ]
        }
        if server.ranges {
            lines.append("# Byte ranges: Blob Storage always serves them; check a proxy or CDN in front of it.")
        }
        if server.types {
            // Each blob keeps the Content-Type it was uploaded with; set it per container and extension.
            for container in server.firstSegments.sorted() {
                for (type, ext) in typeTable(server) {
                    lines.append(
                        "az storage blob list --account-name \(account) --container-name \(container) --query \"[?ends_with(name, '.\(ext)')].name\" -o tsv | while read -r blob; do az storage blob update --account-name \(account) --container-name \(container) --name \"$blob\" --content-type '\(type)'; done"
                    )
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
