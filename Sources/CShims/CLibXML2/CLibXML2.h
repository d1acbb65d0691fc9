// Thin shim over libxml2 2.9 (Debian 12), and the one hardened way CastPrep reads XML
// (DASH manifests in HTTPCheck and MediaProbe, TTML in Captions): no network, no external
// entities, no DTD loading, and every declared entity empty, so neither a "billion laughs"
// document nor a huge entity referenced many times can make the parser or a reader of the
// tree expand anything.
#ifndef CASTPREP_CLIBXML2_H
#define CASTPREP_CLIBXML2_H

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

/// LIBXML_DOTTED_VERSION is a string macro; expose it as a function for version checks.
static inline const char *castprep_libxml_dotted_version(void) { return LIBXML_DOTTED_VERSION; }

/// xmlFree is a global function-pointer variable, which Swift 6 treats as shared mutable
/// state; calling it through a function keeps strict concurrency checking happy.
static inline void castprep_xmlFree(void *pointer) { xmlFree(pointer); }

/// The SAX entityDecl handler of a hardened parser: every <!ENTITY> (general or parameter,
/// internal or external) is declared as an internal entity with empty replacement text. Entity
/// references are what make XML expand, and with every replacement empty, every text and
/// attribute value is at most as long as the input, however many references and however deep
/// the nesting ("billion laughs"); an external entity is never loaded. References stay in the
/// tree as entity reference nodes, so a reader can still name them.
static inline void castprep_xml_neutral_entity(void *context, const xmlChar *name, int type, const xmlChar *publicId,
                                               const xmlChar *systemId, xmlChar *content) {
    (void)publicId; (void)systemId; (void)content;
    int parameter = type == XML_INTERNAL_PARAMETER_ENTITY || type == XML_EXTERNAL_PARAMETER_ENTITY;
    xmlSAX2EntityDecl(context, name, parameter ? XML_INTERNAL_PARAMETER_ENTITY : XML_INTERNAL_GENERAL_ENTITY, NULL, NULL,
                      (xmlChar *)"");
}

/// Options that can never be combined with the hardened read: entity substitution, DTD
/// loading, attribute defaults and validation from a DTD, XInclude, and lifting of the
/// parser's own size limits.
static const int castprep_xml_forbidden_options =
    XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_DTDATTR | XML_PARSE_DTDVALID | XML_PARSE_XINCLUDE | XML_PARSE_HUGE;

/// The options of a hardened read: `extra` (e.g. XML_PARSE_NOCDATA) without the forbidden
/// ones, plus XML_PARSE_NONET.
static inline int castprep_xml_options(int extra) { return (extra & ~castprep_xml_forbidden_options) | XML_PARSE_NONET; }

/// Makes a parser context declare every entity empty. Call before xmlCtxtReadMemory with
/// castprep_xml_options(...).
static inline void castprep_xml_harden(xmlParserCtxtPtr context) {
    if (context != NULL && context->sax != NULL) context->sax->entityDecl = castprep_xml_neutral_entity;
}

/// Whether a document's internal subset declares any entity (all of them empty when it was
/// read by a hardened parser).
static inline int castprep_xml_declares_entities(xmlDocPtr document) {
    if (document == NULL || document->intSubset == NULL) return 0;
    return document->intSubset->entities != NULL || document->intSubset->pentities != NULL;
}

/// Why castprep_xml_read returned no document.
typedef struct {
    /// The document declares entities; documents that must not use them (DASH manifests:
    /// a browser's parser would expand them) are refused instead of read with empty values.
    int refusedEntities;
    /// The line of libxml2's first error, 0 when unknown.
    int line;
} castprep_xml_failure;

/// Reads `size` bytes of XML with a hardened parser (no network, every entity empty, no DTD
/// loading, libxml2's default size limits) and no error output; a document that declares
/// entities is refused. NULL with `failure` filled when the document is refused or not
/// well-formed. Free the document with xmlFreeDoc.
static inline xmlDocPtr castprep_xml_read(const char *bytes, int size, const char *name, castprep_xml_failure *failure) {
    failure->refusedEntities = 0;
    failure->line = 0;
    xmlParserCtxtPtr context = xmlNewParserCtxt();
    if (context == NULL) return NULL;
    castprep_xml_harden(context);
    xmlDocPtr document =
        xmlCtxtReadMemory(context, bytes, size, name, NULL, castprep_xml_options(XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    if (document == NULL) {
        failure->line = context->lastError.line;
    } else if (castprep_xml_declares_entities(document)) {
        failure->refusedEntities = 1;
        xmlFreeDoc(document);
        document = NULL;
    }
    xmlFreeParserCtxt(context);
    return document;
}

#endif
