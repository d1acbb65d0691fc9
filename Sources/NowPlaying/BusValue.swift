internal import CSDBus
/// A D-Bus value of the few types MPRIS uses, with its signature.
public enum BusValue: Sendable, Hashable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case int64(Int64)
    case double(Double)
    case stringArray([String])
    /// `a{sv}`, written in key order.
    case dictionary([String: BusValue])
    /// `v`: a value with its own signature.
    indirect case variant(BusValue)

    /// The D-Bus type signature.
    public var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .int64: "x"
        case .double: "d"
        case .stringArray: "as"
        case .dictionary: "a{sv}"
        case .variant: "v"
        }
    }
}

/// Appends values to an sd-bus message; after the first failure nothing more is written and
/// ``isValid`` is false (the message is then dropped, not sent half-written).
struct BusWriter {
    let message: OpaquePointer
    private(set) var isValid = true

    init(message: OpaquePointer) { self.message = message }

    mutating func append(_ value: BusValue) {
        guard isValid else { return }
        switch value {
        case .string(let text), .objectPath(let text):
            // D-Bus strings cannot hold NUL; sd-bus refuses invalid UTF-8 and bad object paths.
            let type: CChar = value.signature == "o" ? CChar(UInt8(ascii: "o")) : CChar(UInt8(ascii: "s"))
            let cleaned = text.replacingNUL
            check(cleaned.withCString { pointer in castprep_sd_bus_message_append_basic(message, type, pointer) })
        case .bool(let flag):
            var number: Int32 = flag ? 1 : 0
            check(castprep_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &number))
        case .int64(let number):
            var number = number
            check(castprep_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &number))
        case .double(let number):
            var number = number
            check(castprep_sd_bus_message_append_basic(message, CChar(UInt8(ascii: "d")), &number))
        case .stringArray(let strings):
            check(castprep_sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s"))
            for string in strings { append(.string(string)) }
            check(castprep_sd_bus_message_close_container(message))
        case .dictionary(let members):
            check(castprep_sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}"))
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                check(castprep_sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv"))
                append(.string(key))
                append(.variant(member))
                check(castprep_sd_bus_message_close_container(message))
            }
            check(castprep_sd_bus_message_close_container(message))
        case .variant(let inner):
            check(castprep_sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), inner.signature))
            append(inner)
            check(castprep_sd_bus_message_close_container(message))
        }
    }

    private mutating func check(_ status: Int32) {
        if status < 0 { isValid = false }
    }
}

/// Reads the arguments of a method call in order.
struct BusReader {
    let message: OpaquePointer

    func string() throws(BusPlayer.Refusal) -> String { try text(type: UInt8(ascii: "s")) }

    func objectPath() throws(BusPlayer.Refusal) -> String { try text(type: UInt8(ascii: "o")) }

    private func text(type: UInt8) throws(BusPlayer.Refusal) -> String {
        var pointer: UnsafePointer<CChar>?
        guard castprep_sd_bus_message_read_basic(message, CChar(type), &pointer) > 0, let pointer else {
            throw .invalidArgs("expected an argument of type \(Character(UnicodeScalar(type)))")
        }
        return String(cString: pointer)
    }

    func int64() throws(BusPlayer.Refusal) -> Int64 {
        var number: Int64 = 0
        guard castprep_sd_bus_message_read_basic(message, CChar(UInt8(ascii: "x")), &number) > 0 else {
            throw .invalidArgs("expected an argument of type x (microseconds)")
        }
        return number
    }

    /// A variant holding a double (`Volume`, `Rate`).
    func doubleVariant() throws(BusPlayer.Refusal) -> Double {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard castprep_sd_bus_message_peek_type(message, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")),
            let contents, String(cString: contents) == "d"
        else { throw .invalidArgs("expected a variant holding a double (d)") }
        guard castprep_sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), "d") > 0 else {
            throw .invalidArgs("expected a variant holding a double (d)")
        }
        var number = 0.0
        guard castprep_sd_bus_message_read_basic(message, CChar(UInt8(ascii: "d")), &number) > 0 else {
            throw .invalidArgs("expected a variant holding a double (d)")
        }
        _ = castprep_sd_bus_message_exit_container(message)
        return number
    }
}

extension String {
    /// The text with NUL characters (which D-Bus strings cannot carry) as U+FFFD.
    var replacingNUL: String {
        contains("\u{0}")
            ? String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })) : self
    }
}
