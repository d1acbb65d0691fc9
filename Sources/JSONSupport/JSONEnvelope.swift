/// The envelope every castprep JSON document shares: one `"castprep"` member naming the
/// document, its layout version and the toolkit version, beside the document's own members.
///
/// ```json
/// {"castprep": {"format": 1, "kind": "castprep.check", "version": "0.1.0"}, "results": [...]}
/// ```
///
/// Keys are lowerCamelCase throughout, with Cast's wire spellings where Cast has one
/// (`contentId`). Each kind has a JSON Schema in the repository's `Schemas/` folder.
public enum JSONEnvelope {
    /// The toolkit version written into every document (and printed by `castprep --version`).
    public static let toolkitVersion = "0.1.0"

    /// The version of the documents' layout; bumped on incompatible changes.
    public static let format = 1

    /// The `"castprep"` member for a document of `kind` (e.g. `"castprep.check"`).
    public static func header(kind: String) -> JSONValue {
        ["format": JSONValue(format), "kind": .string(kind), "version": .string(toolkitVersion)]
    }

    /// A document of `kind`: the envelope member beside `body`'s members.
    public static func document(kind: String, body: [String: JSONValue]) -> JSONValue {
        var members = body
        members["castprep"] = header(kind: kind)
        return .object(members)
    }
}
