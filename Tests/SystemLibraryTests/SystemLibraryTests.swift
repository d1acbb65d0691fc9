internal import CCurl
internal import CFFmpeg
internal import CLibXML2
internal import CMicroHTTPD
internal import COpenSSL
internal import CSQLite
internal import CSDBus
import Testing

/// Proves every C shim compiles, links and loads the Debian 12 library it wraps (the versions
/// the shims are written for), so a missing or mismatched -dev package fails here with a
/// clear name rather than deep inside a feature test.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("FFmpeg is 5.1 or later (libavformat 59) and loads at run time")
    func ffmpeg() {
        #expect(castprep_ffmpeg_load_error() == nil)
        let version = castprep_avformat_version()
        #expect(version >> 16 >= 59)
        #expect(castprep_avcodec_version() >> 16 >= 59)
        #expect(castprep_AVERROR(22) == -22)
    }

    @Test("libxml2 is 2.9 or later")
    func libxml2() {
        let version = String(cString: castprep_libxml_dotted_version())
        let parts = version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3)
        #expect((parts.first ?? 0, parts.dropFirst().first ?? 0) >= (2, 9))
    }

    @Test("libcurl is 7.88 or later, has TLS and loads at run time")
    func curl() throws {
        #expect(castprep_curl_load_error() == nil)
        let info = try #require(castprep_curl_version_info())
        #expect(info.pointee.version_num >= 0x075800)
        #expect(info.pointee.ssl_version != nil)
    }

    @Test("OpenSSL is 3.0 or later")
    func openssl() {
        #expect(castprep_OpenSSL_version_num() >= 0x3000_0000)
    }

    @Test("SQLite is 3.40 or later and thread-safe")
    func sqlite() {
        #expect(castprep_sqlite_load_error() == nil)
        #expect(castprep_sqlite3_libversion_number() >= 3_040_000)
        #expect(castprep_sqlite3_threadsafe() != 0)
    }

    @Test("libmicrohttpd is 0.9.75 or later and loads at run time")
    func microhttpd() {
        #expect(castprep_microhttpd_load_error() == nil)
        let version = String(cString: castprep_MHD_get_version())
        let parts = version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count >= 3)
        #expect(parts.lexicographicallyPrecedes([0, 9, 75]) == false)
    }

    @Test("sd-bus (libsystemd) loads at run time with every function the MPRIS bus calls")
    func sdbus() {
        #expect(castprep_sdbus_load_error() == nil)
    }
}
