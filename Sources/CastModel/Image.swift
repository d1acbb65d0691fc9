public import JSONSupport

/// An image for metadata or a queue container: `{url, width?, height?}`.
public struct CastImage: CastJSONConvertible {
    public static let wireTypeName = "Image"
    /// The image URL (http or https; the device fetches it).
    public var url: String
    /// Width in pixels, when known; senders use it to pick a size.
    public var width: Int?
    /// Height in pixels, when known.
    public var height: Int?
    /// Members CastPrep does not model, kept for round-tripping.
    public var extraMembers: [String: JSONValue]

    /// Creates an image.
    public init(url: String, width: Int? = nil, height: Int? = nil, extraMembers: [String: JSONValue] = [:]) {
        self.url = url
        self.width = width
        self.height = height
        self.extraMembers = extraMembers
    }

    public static func decode(from json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic]) -> Self? {
        guard var reader = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        let url = reader.string("url")
        if url == nil, !reader.has("url") {
            reader.diagnostics.append(
                Diagnostic(
                    .error, "media.image-url-missing", "Image has no url", fix: "add \"url\": \"https://…/poster.jpg\"",
                    path: path))
        }
        var image = CastImage(url: url ?? "", width: reader.int("width"), height: reader.int("height"))
        image.extraMembers = reader.finish(into: &diagnostics)
        return image
    }

    public var jsonValue: JSONValue {
        var writer = ObjectWriter(extras: extraMembers)
        writer.set("url", url)
        writer.set("width", width)
        writer.set("height", height)
        return writer.json
    }
}
