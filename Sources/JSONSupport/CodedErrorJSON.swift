public import CodedErrors

extension JSONValue {
    /// The JSON form of a ``CodedError``, as `--json` documents carry it: the members of an
    /// error-level diagnostic (`severity`, `code`, `message`, `fix`, `location`) plus `causes`,
    /// the codes of the errors it wraps, each once (see ``ErrorRenderer``).
    ///
    /// ```json
    /// {"causes": ["json.unexpected-end"], "code": "preflight.catalog-unreadable",
    ///  "fix": "close the string with \"", "message": "cannot read catalog.json: …", "severity": "error"}
    /// ```
    public init(codedError error: any CodedError) {
        let rendering = ErrorRenderer.render(error)
        var members: [String: JSONValue] = [
            "severity": "error",
            "code": .string(rendering.code.rawValue),
            "message": .string(rendering.message),
        ]
        if let fix = rendering.fix { members["fix"] = .string(fix) }
        if let location = rendering.location {
            var place: [String: JSONValue] = ["file": .string(location.file)]
            if let line = location.line { place["line"] = JSONValue(line) }
            if let column = location.column { place["column"] = JSONValue(column) }
            members["location"] = .object(place)
        }
        if !rendering.causeCodes.isEmpty {
            members["causes"] = .array(rendering.causeCodes.map { .string($0.rawValue) })
        }
        self = .object(members)
    }
}
