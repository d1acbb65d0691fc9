/// The fields a wire type seldom uses, kept out of line behind one reference with copy on
/// write.
///
/// Cast models are values that are copied whole: into every LOAD, queue item and status, and
/// through the builder, the validator and the writers. A struct of thirty-odd optionals costs a
/// retain or a check per field on each copy, and its size in moves; most media set none of the
/// series, music, photo, ad or HLS fields. A model keeps those in a `Fields` struct held here,
/// nil until the first is set, and reads them through computed properties.
///
/// ```swift
/// private var details: OutOfLineFields<Details>?
/// public var artist: String? {
///     get { details?.fields.artist }
///     set { OutOfLineFields.set(\.artist, to: newValue, in: &details) }
/// }
/// ```
package final class OutOfLineFields<Fields: OutOfLineFieldSet>: Hashable, @unchecked Sendable {
    // Unchecked: `fields` is changed only by `set(_:to:in:)`, and only when this box is
    // uniquely referenced, so no other value, and no other thread, can see the change.
    // Sharing it between threads is as safe as sharing the struct it stands for.
    package var fields: Fields

    package init(_ fields: Fields) { self.fields = fields }

    package static func == (left: OutOfLineFields, right: OutOfLineFields) -> Bool {
        left === right || left.fields == right.fields
    }

    package func hash(into hasher: inout Hasher) { fields.hash(into: &hasher) }

    /// Sets one field: the box is made on the first value, copied before a change when it is
    /// shared, and dropped when its last field is cleared, so that equal models stay equal
    /// (and hash alike) whatever was set and cleared on the way.
    package static func set<Value>(
        _ field: WritableKeyPath<Fields, Value?>, to value: Value?, in box: inout OutOfLineFields?
    ) {
        guard let current = box else {
            guard value != nil else { return }
            var fields = Fields()
            fields[keyPath: field] = value
            box = OutOfLineFields(fields)
            return
        }
        var fields = current.fields
        fields[keyPath: field] = value
        if fields == Fields() {
            box = nil
        } else if isKnownUniquelyReferenced(&box!) {
            current.fields = fields
        } else {
            box = OutOfLineFields(fields)
        }
    }
}

/// A set of optional fields held by ``OutOfLineFields``: all nil when made empty.
package protocol OutOfLineFieldSet: Hashable, Sendable {
    init()
}
