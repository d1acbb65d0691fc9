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
    package private(set) var fields: Fields

    private init(_ fields: Fields) { self.fields = fields }

    /// A box holding `fields`; nil when every field is nil, so that equal models stay equal
    /// (and hash alike) whatever was set and cleared on the way.
    package static func holding(_ fields: Fields) -> OutOfLineFields? {
        fields == Fields() ? nil : OutOfLineFields(fields)
    }

    package static func == (left: OutOfLineFields, right: OutOfLineFields) -> Bool {
        left === right || left.fields == right.fields
    }

    package func hash(into hasher: inout Hasher) { fields.hash(into: &hasher) }

    /// Sets one field: in place when the box is not shared, in a copy when it is; the box is
    /// made on the first value and dropped when its last field is cleared (see ``holding(_:)``).
    package static func set<Value>(
        _ field: WritableKeyPath<Fields, Value?>, to value: Value?, in box: inout OutOfLineFields?
    ) {
        guard value != nil else {
            // Clearing: nothing to do unless the field is set (decoders clear every absent one).
            guard let current = box, current.fields[keyPath: field] != nil else { return }
            var fields = current.fields
            fields[keyPath: field] = nil
            box = holding(fields)
            return
        }
        if box == nil {
            box = OutOfLineFields(Fields())
        } else if !isKnownUniquelyReferenced(&box!) {
            box = OutOfLineFields(box!.fields)
        }
        box!.fields[keyPath: field] = value
    }
}

/// A set of optional fields held by ``OutOfLineFields``: all nil when made empty.
package protocol OutOfLineFieldSet: Hashable, Sendable {
    init()
}
