@testable import MediaServer
import Testing

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test(
        "the three forms RFC 9110 requires recipients to read",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ])
    func forms(text: String) {
        #expect(HTTPDate.parse(text) == 784_111_777)
    }

    @Test(
        "formatting gives IMF-fixdate",
        arguments: [
            (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
            (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        ])
    func format(seconds: Int64, text: String) {
        #expect(HTTPDate.format(seconds) == text)
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test(
        "anything else is not a date",
        arguments: [
            "", "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 94 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 06 Nov 1994 08:49 GMT", "Mon, 32 Jan 2024 00:00:00 GMT",
        ])
    func invalid(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
