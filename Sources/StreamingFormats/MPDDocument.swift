internal import CLibXML2
public import CodedErrors

/// A DASH manifest read by the one hardened XML loader (CLibXML2's `castprep_xml_read`): no
/// network access, no DTD loading, every entity declared empty and a document that declares
/// any refused, at most ``maximumBytes`` bytes. A hostile manifest can make nothing fetch or
/// expand.
///
/// Its elements keep the libxml2 tree alive. It is not `Sendable`: read what you need from it,
/// then let it go.
public struct MPDDocument {
    /// Manifests larger than this are refused.
    public static let maximumBytes = 16 << 20

    /// The `<MPD>` element.
    public let root: MPDElement

    /// Reads manifest bytes.
    ///
    /// - Throws: ``MPDReadError`` when the manifest is too large, declares entities, is not
    ///   well-formed or has another root than `<MPD>`.
    public init(_ bytes: [UInt8]) throws(MPDReadError) {
        guard bytes.count <= Self.maximumBytes else {
            throw MPDReadError(message: "the manifest is \(bytes.count) bytes; the limit is \(Self.maximumBytes)")
        }
        var failure = castprep_xml_failure()
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                castprep_xml_read($0.baseAddress, Int32($0.count), "manifest.mpd", &failure)
            }
        }
        guard let document else {
            let line = failure.line > 0 ? Int(failure.line) : nil
            if failure.refusedEntities != 0 {
                throw MPDReadError(
                    message:
                        "the manifest declares XML entities (<!ENTITY>), which are refused: a browser expands them (to gigabytes in a hostile manifest)",
                    line: line)
            }
            throw MPDReadError(message: "the manifest is not well-formed XML", line: line)
        }
        let tree = XMLTree(document)
        guard let node = castprep_xmlDocGetRootElement(document) else {
            throw MPDReadError(message: "the root element is not <MPD>")
        }
        let root = MPDElement(node, in: tree)
        guard root.name == "MPD" else { throw MPDReadError(message: "the root element is not <MPD>") }
        self.root = root
    }
}

/// Owns a libxml2 document and frees it when the last element referring to it is gone.
final class XMLTree {
    let document: xmlDocPtr

    init(_ document: xmlDocPtr) { self.document = document }

    deinit { castprep_xmlFreeDoc(document) }
}

/// Why a manifest could not be read at all.
public struct MPDReadError: CodedError, Hashable {
    /// What is wrong.
    public var message: String
    /// The line libxml2 stopped at, when known.
    public var line: Int?

    public init(message: String, line: Int? = nil) {
        self.message = message
        self.line = line
    }

    /// Always `dash.manifest-unreadable`; HTTPCheck and MediaProbe report it under their own
    /// codes with this error as the cause.
    public var code: DiagnosticCode { "dash.manifest-unreadable" }

    public var fix: String? {
        "serve the DASH manifest itself: well-formed XML with an <MPD> root, without a DTD or entities, at most \(MPDDocument.maximumBytes) bytes"
    }

    /// The line, when libxml2 gave one (the caller knows the URL or file).
    public var location: FileLocation? { line.map { FileLocation(file: "", line: $0) } }
}

/// An element of an ``MPDDocument``.
public struct MPDElement {
    /// The `xmlNode`, untyped so that no libxml2 type is part of this struct's layout.
    let address: UnsafeMutableRawPointer
    let tree: XMLTree

    init(_ node: xmlNodePtr, in tree: XMLTree) {
        self.address = UnsafeMutableRawPointer(node)
        self.tree = tree
    }

    var node: xmlNodePtr { address.assumingMemoryBound(to: xmlNode.self) }

    /// The element's local name.
    public var name: String { node.pointee.name.map { String(cString: $0) } ?? "" }

    /// The value of an attribute, or nil.
    public func attribute(_ key: String) -> String? {
        guard let value = castprep_xmlGetProp(node, key) else { return nil }
        defer { castprep_xmlFree(value) }
        return String(cString: value)
    }

    /// The element's text, blanks around it removed (entities read by the hardened loader are
    /// empty, so it is never longer than the manifest).
    public var text: String? {
        guard let content = castprep_xmlNodeGetContent(node) else { return nil }
        defer { castprep_xmlFree(content) }
        return String(HLSLines.trimmingBlanks(Substring(String(cString: content))))
    }

    /// The child elements named `wanted`, in order.
    public func children(named wanted: String) -> [MPDElement] {
        var result: [MPDElement] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE {
                let element = MPDElement(current, in: tree)
                if element.name == wanted { result.append(element) }
            }
            child = current.pointee.next
        }
        return result
    }

    /// The first child element named `wanted`.
    public func firstChild(named wanted: String) -> MPDElement? {
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE {
                let element = MPDElement(current, in: tree)
                if element.name == wanted { return element }
            }
            child = current.pointee.next
        }
        return nil
    }
}
