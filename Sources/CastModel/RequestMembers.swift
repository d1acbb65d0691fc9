import JSONSupport

/// One member of a request's wire object: its key, how it is read into the Swift value and how
/// it is written back.
///
/// Most requests are `type`, `requestId` and a flat list of members. Listing those members once,
/// as a table of key paths, keeps each request's reading and writing the same by construction: a
/// member cannot be decoded under one name and encoded under another, and the reading order
/// (which orders the diagnostics) is the table's.
struct RequestMember<Request> {
    /// What to report when the member is absent, for members a request cannot do without.
    struct Requirement {
        let code: DiagnosticCode
        let message: String
        let fix: String
    }

    let key: String
    let requirement: Requirement?
    let read: (inout JSONObjectReader, inout Request) -> Void
    let write: (Request, inout ObjectWriter) -> Void

    static func int(_ key: String, _ member: WritableKeyPath<Request, Int?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.int(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func double(_ key: String, _ member: WritableKeyPath<Request, Double?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.double(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func string(_ key: String, _ member: WritableKeyPath<Request, String?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.string(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func bool(_ key: String, _ member: WritableKeyPath<Request, Bool?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.bool(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    /// A free-form member such as `customData`.
    static func value(_ key: String, _ member: WritableKeyPath<Request, JSONValue?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.value(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func vocabulary<V: CastVocabulary>(_ key: String, _ member: WritableKeyPath<Request, V?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.vocabulary(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func model<T: CastJSONConvertible>(_ key: String, _ member: WritableKeyPath<Request, T?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.model(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    /// A model the request always writes; an absent one reads as `absent`.
    static func model<T: CastJSONConvertible>(_ key: String, _ member: WritableKeyPath<Request, T>, absent: T) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.model(key) ?? absent },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    static func models<T: CastJSONConvertible>(_ key: String, _ member: WritableKeyPath<Request, [T]?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.models(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    /// An array of integers that may be absent (absent and empty can mean different things).
    static func ints(_ key: String, _ member: WritableKeyPath<Request, [Int]?>) -> Self {
        Self(
            key: key, requirement: nil, read: { $1[keyPath: member] = $0.ints(key) },
            write: { $1.set(key, $0[keyPath: member]) })
    }

    /// An array of integers the request always writes; an absent one reads as empty, and
    /// `requirement`, when given, is reported for it.
    static func ints(_ key: String, _ member: WritableKeyPath<Request, [Int]>, requirement: Requirement? = nil) -> Self
    {
        Self(
            key: key, requirement: requirement, read: { $1[keyPath: member] = $0.ints(key) ?? [] },
            write: { $1.set(key, $0[keyPath: member]) })
    }
}

/// A request whose wire object is `type`, `requestId` and the members of its table, plus the
/// unknown members it keeps.
///
/// Conforming types still declare `decode(from:at:diagnostics:)` and `jsonValue` themselves (the
/// public witnesses of ``CastJSONConvertible``), each a one-line call to ``decodeRequest(_:at:diagnostics:empty:)``
/// or ``requestJSON``.
protocol TabulatedRequest: CastRequest {
    var extraMembers: [String: JSONValue] { get set }
    /// The members after `type` and `requestId`, in reading order.
    static var members: [RequestMember<Self>] { get }
}

extension TabulatedRequest {
    /// Reads a request object into `empty`: checks `type`, reports missing required members,
    /// reads `requestId` and the table's members in order, and keeps everything else.
    static func decodeRequest(_ json: JSONValue, at path: JSONPath, diagnostics: inout [Diagnostic], empty: Self)
        -> Self?
    {
        guard var reader = JSONObjectReader(json, at: path, typeName: wireTypeName, diagnostics: &diagnostics) else {
            return nil
        }
        reader.checkType(messageType)
        let members = Self.members
        for member in members {
            guard let requirement = member.requirement, !reader.has(member.key) else { continue }
            reader.diagnostics.append(
                Diagnostic(.error, requirement.code, requirement.message, fix: requirement.fix, path: path))
        }
        var value = empty
        value.requestID = reader.int("requestId")
        for member in members { member.read(&reader, &value) }
        value.extraMembers = reader.finish(into: &diagnostics)
        return value
    }

    /// The wire object: kept members, then `type`, `requestId` and the table's members.
    var requestJSON: JSONValue {
        var writer = ObjectWriter(extras: extraMembers)
        writer.set("type", Self.messageType)
        writer.set("requestId", requestID)
        for member in Self.members { member.write(self, &writer) }
        return writer.json
    }
}

extension RequestMember.Requirement {
    /// QUEUE_REMOVE and QUEUE_REORDER name the items they act on.
    static func itemIDs(of messageType: String) -> Self {
        Self(code: "queue.item-ids-missing", message: "\(messageType) has no itemIds", fix: "add \"itemIds\": [ … ]")
    }
}
