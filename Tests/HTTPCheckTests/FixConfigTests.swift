import CastModel
import HTTPCheck
import Testing
import TestSupport

@Suite("--fix-config output for every server kind")
struct FixConfigTests {
    /// A report as a check of a bucket-hosted HLS stream with several problems would produce.
    static func report(host: String, credentials: Bool = false) -> CheckReport {
        func finding(_ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ path: String) -> HTTPFinding {
            HTTPFinding(
                Diagnostic(severity, code, "seen", fix: HTTPCheckCode.fix(for: code), url: "https://\(host)\(path)"))
        }
        return CheckReport(
            origin: "https://www.gstatic.com", usesCredentials: credentials,
            results: [
                ResourceResult(url: "https://\(host)/media/master.m3u8", kind: .hlsMasterPlaylist, requiresCORS: true),
                ResourceResult(url: "https://\(host)/media/v0/seg0.ts", kind: .hlsSegment, requiresCORS: true),
                ResourceResult(url: "https://\(host)/media/en.vtt", kind: .textTrack, requiresCORS: true),
            ],
            findings: [
                finding(.error, HTTPCheckCode.corsMissing, "/media/v0/seg0.ts"),
                finding(.warning, HTTPCheckCode.preflightFailed, "/media/v0/seg0.ts"),
                finding(.warning, HTTPCheckCode.contentTypeMismatch, "/media/en.vtt"),
                finding(.error, HTTPCheckCode.rangeUnsupported, "/media/v0/seg0.ts"),
                finding(.error, HTTPCheckCode.statusError, "/media/missing.ts"),
            ])
    }

    @Test(
        "each format fixes exactly the findings, for the bucket or server the URLs name",
        arguments: FixConfigFormat.allCases)
    func formats(format: FixConfigFormat) {
        let host =
            switch format {
            case .s3: "media-bucket.s3.eu-west-1.amazonaws.com"
            case .gcs: "storage.googleapis.com"
            case .azure: "castmedia.blob.core.windows.net"
            default: "media.example.com"
            }
        let text = FixConfigGenerator.configuration(for: Self.report(host: host), format: format)
        Snapshot.assertMatches(text, named: "fix-\(format.rawValue).txt")
    }

    @Test("a credentialed receiver gets its origin echoed, never *")
    func credentials() {
        for format in FixConfigFormat.allCases {
            let text = FixConfigGenerator.configuration(
                for: Self.report(host: "media.example.com", credentials: true), format: format)
            let configuration = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
            #expect(configuration.contains("https://www.gstatic.com"), "\(format)")
            for wildcard in [#"Origin "*""#, #"["*"]"#, "--origins '*'"] {
                #expect(!configuration.contains(wildcard), "\(format)")
            }
        }
    }

    @Test("no findings, no configuration")
    func nothing() {
        let text = FixConfigGenerator.configuration(for: CheckReport(origin: "https://www.gstatic.com"), format: .nginx)
        #expect(text.hasSuffix("# nothing to fix: no finding calls for a configuration change\n"))
    }
}
