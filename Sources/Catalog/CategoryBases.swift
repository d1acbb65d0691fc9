/// A CastVideos category's base URLs (`hls`, `dash`, `mp4`, `images`, `tracks`), each judged
/// once for the category.
///
/// Every source, image and track of every video is resolved against one of these. Looking
/// the base up by name in a dictionary hashed the name, and asking whether the base is a plain
/// directory (so that resolving is joining) read its bytes again, six times per video; both
/// are done here once, when a category's header is read.
struct CategoryBases: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The bases as the category gives them, by name.
    let texts: [String: String]
    private let hls: URLResolver.Base?
    private let dash: URLResolver.Base?
    private let mp4: URLResolver.Base?
    private let images: URLResolver.Base?
    private let tracks: URLResolver.Base?

    /// The members of a category that give a base URL.
    static let names = ["hls", "dash", "mp4", "images", "tracks"]

    init(_ texts: [String: String]) {
        self.texts = texts
        hls = texts["hls"].map(URLResolver.Base.init)
        dash = texts["dash"].map(URLResolver.Base.init)
        mp4 = texts["mp4"].map(URLResolver.Base.init)
        images = texts["images"].map(URLResolver.Base.init)
        tracks = texts["tracks"].map(URLResolver.Base.init)
    }

    init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements) { _, last in last })
    }

    /// The base named `name`; nil when the category has none (or `name` is not one of
    /// ``names``).
    subscript(name: String) -> URLResolver.Base? {
        switch name {
        case "hls": hls
        case "dash": dash
        case "mp4": mp4
        case "images": images
        case "tracks": tracks
        default: nil
        }
    }

    static func == (lhs: CategoryBases, rhs: CategoryBases) -> Bool { lhs.texts == rhs.texts }
}
