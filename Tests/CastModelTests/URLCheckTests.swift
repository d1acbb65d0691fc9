import Testing

@testable import CastModel

/// `URLCheck` reads a URL's bytes in one indexed pass; these are the readings it must give,
/// including the corners of the authority (user info, IPv6 brackets, ports) and the order in
/// which two faults of one URL are reported.
@Suite("URL checks on bytes")
struct URLCheckTests {
    @Test(
        "each URL gets its verdict",
        arguments: [
            ("https://media.example.com/a.mp4", URLCheck.ok),
            ("", .empty),
            ("video.mp4", .relative),
            ("/abs/video.mp4", .relative),
            ("ftp://h/y.mp4", .scheme("ftp")),
            // Wrong in two ways: the scheme is reported, not the space.
            ("file:///tmp/a b.mp4", .scheme("file")),
            ("https://h/a b.mp4", .invalidCharacter(" ")),
            ("https://h/a\"b", .invalidCharacter("\"")),
            ("http:", .missingHost),
            ("https:/h/a", .missingHost),
            ("https://", .missingHost),
            ("https://:80/x", .missingHost),
            ("http://user@/x", .missingHost),
            ("HTTPS://Media.Example.com/a", .ok),
            ("https://cdn.example.com?x=1", .ok),
            ("https://cdn.example.com#top", .ok),
            ("https://example.com@cdn.example.com/x", .ok),
            ("http://localhost:8000/a", .loopback("localhost")),
            ("HTTP://LOCALHOST/a", .loopback("localhost")),
            ("http://cdn.localhost/a", .loopback("cdn.localhost")),
            ("http://[::1]:8080/a", .loopback("::1")),
            ("http://[::1", .loopback("::1")),
            ("http://user:pw@127.0.0.1/a", .loopback("127.0.0.1")),
            ("http://a@b@localhost/x", .loopback("localhost")),
            ("http://0.0.0.0/", .loopback("0.0.0.0")),
            ("http://10.0.0.1/a", .ok),
            ("http://host.test/a", .ok),
        ])
    func verdict(url: String, expected: URLCheck) {
        #expect(URLCheck.check(url) == expected)
    }

    @Test(
        "a scheme is found on bytes as it always was",
        arguments: [
            ("https://h/", "https"), ("HTTP://h", "http"), ("c:/file", nil), ("a+b.c-d:x", "a+b.c-d"), ("1a:x", nil),
            ("no colon", nil), ("with space:x", nil), (":x", nil), ("ab:", "ab"),
        ])
    func scheme(text: String, expected: String?) {
        #expect(URLSyntax.scheme(of: text) == expected)
        #expect(URLSyntax.hasScheme(text) == (expected != nil))
    }
}
