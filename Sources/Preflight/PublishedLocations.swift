import Foundation
import JSONSupport

/// How the files written for casting — the corrected `catalog.json`, `load-requests.ndjson`
/// and `queue.json` — name local media, so that they outlive the run.
///
/// During the run every local file is fetched from the built-in server, on a port chosen for
/// this run and gone when it ends. URLs on that server would make the written files useless
/// the moment preflight exits (the device answers LOAD_FAILED, blamed on CORS). So those base
/// URLs are rewritten as the files are written:
/// - by default into references relative to the output folder (`../media/movie.mp4`,
///   `captions/movie-1.en.vtt`), which `castprep cast` resolves and serves again on the
///   address the device reaches, and `castprep validate` checks against the disk;
/// - with `--base-url`, into absolute URLs under that base, laid out as the built-in server
///   laid them out (the served folder at the base, the output folder under `_castprep/`),
///   for a library about to be published on a CDN.
///
/// The report files keep the URLs that were fetched: they record what was checked.
struct PublishedLocations: Sendable {
    /// A served base URL and what replaces it, longest base first: the output folder's base
    /// (`…/_castprep/`) extends the main one and must be replaced before it.
    private let replacements: [(served: [UInt8], published: [UInt8])]
    /// The corrected catalog's `serve` member, or nil (no local files, or published URLs).
    let serveMember: JSONValue?

    /// Nothing to rewrite: no local files were served.
    static let none = PublishedLocations(replacements: [], serveMember: nil)

    private init(replacements: [(served: [UInt8], published: [UInt8])], serveMember: JSONValue?) {
        self.replacements = replacements.sorted { $0.served.count > $1.served.count }
        self.serveMember = serveMember
    }

    /// One served folder: where it is, its role, and the base URL it was served at.
    struct ServedFolder: Sendable {
        enum Role: Sendable { case root, output, withoutCORS, extra }
        var path: String
        var role: Role
        var baseURL: String
        /// Where the folder lies below the server's root, without the run's token
        /// (`_castprep/files/0/`): the layout kept under `--base-url`.
        var layoutPath: String = ""
    }

    /// The rewriting for `folders` (absolute, standardized paths), relative to `outputDirectory`
    /// or under `baseURL`.
    init(folders: [ServedFolder], outputDirectory: String, baseURL: String?) {
        guard let root = folders.first(where: { $0.role == .root }) else {
            self = .none
            return
        }
        var replacements: [(served: [UInt8], published: [UInt8])] = []
        if let baseURL {
            let base = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
            for folder in folders {
                let published: String =
                    switch folder.role {
                    case .root: base
                    case .output: base + "_castprep/"
                    case .withoutCORS, .extra:
                        // Published where the folder lies under the root; a folder outside it
                        // keeps the server's layout below the base.
                        base + (Self.relativeReference(from: root.path, to: folder.path) ?? folder.layoutPath)
                    }
                replacements.append((Array(folder.baseURL.utf8), Array(published.utf8)))
            }
            self.init(replacements: replacements, serveMember: nil)
            return
        }
        for folder in folders {
            let relative = Self.relativeReference(from: outputDirectory, to: folder.path, allowParents: true) ?? ""
            replacements.append((Array(folder.baseURL.utf8), Array(relative.utf8)))
        }
        var serve: [String: JSONValue] = [:]
        let rootReference = Self.relativeReference(from: outputDirectory, to: root.path, allowParents: true) ?? ""
        serve["root"] = .string(rootReference.isEmpty ? "." : String(rootReference.dropLast()))
        let plain = folders.filter { $0.role == .withoutCORS }.compactMap {
            Self.relativeReference(from: root.path, to: $0.path)
        }
        if !plain.isEmpty { serve["withoutCORS"] = .array(plain.map { .string(String($0.dropLast())) }) }
        self.init(replacements: replacements, serveMember: .object(serve))
    }

    /// `text` with every served base URL replaced.
    func rewrite(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var result = Array(text)
        for (served, published) in replacements {
            result = ByteText.replacing(served, with: published, in: result)
        }
        return result
    }

    /// Whether anything is rewritten.
    var isEmpty: Bool { replacements.isEmpty }

    /// A percent-encoded relative reference from the folder `base` to the folder `target`,
    /// ending in `/` (empty when they are the same folder); nil when `target` is not under
    /// `base` and `allowParents` is false.
    static func relativeReference(from base: String, to target: String, allowParents: Bool = false) -> String? {
        let from = base.split(separator: "/").map(String.init)
        let to = target.split(separator: "/").map(String.init)
        var common = 0
        while common < min(from.count, to.count), from[common] == to[common] { common += 1 }
        let ups = from.count - common
        guard ups == 0 || allowParents else { return nil }
        let down = to[common...].map { $0.addingPercentEncoding(withAllowedCharacters: pathSegmentCharacters) ?? $0 }
        return (Array(repeating: "..", count: ups) + down).map { $0 + "/" }.joined()
    }

    /// RFC 3986 `pchar` without the sub-delimiters that some servers mistreat.
    private static let pathSegmentCharacters: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        set.insert(charactersIn: "-._~!$&'()*+,;=:@")
        return set
    }()
}
