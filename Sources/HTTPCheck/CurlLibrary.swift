public import CastModel
internal import CCurl
import Hashing
import SystemIO

/// libcurl is loaded the first time a transport needs it instead of being linked (CCurl.h says
/// why: about 30 shared libraries at every start of castprep). Everything that calls libcurl
/// goes through ``problem`` first, so a missing library is an error with a fix, not a crash.
enum CurlLibrary {
    /// The Debian package with the libcurl this build loads.
    static let package = CASTPREP_CURL_PACKAGE

    /// Nil once libcurl is loaded and initialised; otherwise why it cannot be used.
    ///
    /// Evaluated once per process (a lazy global), which is also what `curl_global_init`
    /// needs: one call before any thread uses libcurl. Loading blocks for a few milliseconds,
    /// so it is first reached on a transport's own thread or through
    /// ``HTTPTransport/requireLibrary()``, never on the cooperative pool.
    static let problem: String? = {
        if let error = castprep_curl_load_error() { return String(cString: error) }
        // libcurl initialises OpenSSL with its exit handler unless OpenSSL already is: a run
        // that ends while a transfer thread is in libcrypto would crash in the freed state.
        OpenSSLCrypto.ensureInitialized()
        let code = castprep_curl_global_init(Int(CURL_GLOBAL_ALL))
        guard code == CURLE_OK else {
            return
                "libcurl could not be initialised: curl_global_init failed: \(String(cString: castprep_curl_easy_strerror(code)))"
        }
        return nil
    }()

    /// The fix for a missing library.
    static var fix: String { "install libcurl: apt-get install \(package)" }
}

/// libcurl could not be loaded or initialised, so no HTTP request can be sent; with the stable
/// code `http.libcurl-missing` and the package to install.
public struct HTTPLibraryError: CodedError, Hashable {
    /// Always ``HTTPCheckCode/libcurlMissing``.
    public var code: DiagnosticCode
    /// What failed, naming the library file, e.g. `libcurl (libcurl.so.4) could not be loaded (...)`.
    public var message: String
    /// How to fix it: the package to install.
    public var fix: String?

    /// Creates the error for a load failure described by `message`.
    public init(_ message: String) {
        code = HTTPCheckCode.libcurlMissing
        self.message = message
        fix = CurlLibrary.fix
    }

    /// The error as a diagnostic, for printing.
    public var diagnostic: Diagnostic { Diagnostic(self) }
}

extension HTTPTransport {
    /// Loads libcurl, off the cooperative pool, and throws if it cannot be used.
    ///
    /// A transport works without this: when libcurl is missing, every request it is sent fails
    /// with ``TransferFailure/Kind/libraryMissing``. Call it before creating a transport where
    /// one clear error beats a failure per request (a command, a preflight run). After the
    /// first call it costs a short-lived thread.
    ///
    /// - Throws: ``HTTPLibraryError`` when libcurl is missing or too old.
    public static func requireLibrary() async throws(HTTPLibraryError) {
        let problem: String? = await withCheckedContinuation { continuation in
            do {
                try IOThread.detach(named: "curl-load") { continuation.resume(returning: CurlLibrary.problem) }
            } catch {
                // No thread to spare: loading here blocks this thread for milliseconds, once,
                // which beats not answering.
                continuation.resume(returning: CurlLibrary.problem)
            }
        }
        if let problem { throw HTTPLibraryError(problem) }
    }
}
