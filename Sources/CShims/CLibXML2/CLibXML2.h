// Thin shim over libxml2 2.9 (Debian 12), and the one hardened way CastPrep reads XML
// (DASH manifests in HTTPCheck and MediaProbe, TTML in Captions): no network, no external
// entities, no DTD loading, and every declared entity empty, so neither a "billion laughs"
// document nor a huge entity referenced many times can make the parser or a reader of the
// tree expand anything.
//
// libxml2 is loaded at run time: binding it (and the ICU libraries it needs) when castprep
// started cost every command that reads no XML (load, validate, --version) most of a
// millisecond. The functions are resolved with dlopen/dlsym on first use, as CCurl.h does for
// libcurl: Swift calls castprep_<name>() instead of <name>(), each table entry is declared
// with __typeof__ of the real declaration (a wrong wrapper does not compile), and a wrapper
// reached when the library cannot be loaded stops the process with a message naming the
// package, as the dynamic loader did before main() when it was linked. Its headers are in
// their own folder, which Package.swift adds to the include path (pkg-config would link it).
#ifndef CASTPREP_CLIBXML2_H
#define CASTPREP_CLIBXML2_H

#if !__has_include(<libxml/parser.h>)
#error "libxml2 development headers not found; install them: apt-get install libxml2-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

// libxml2 2.x has kept the soname libxml2.so.2.
#if defined(__APPLE__)
#define CASTPREP_LIBXML2_SONAME "libxml2.2.dylib"
#else
#define CASTPREP_LIBXML2_SONAME "libxml2.so.2"
#endif

/// The Debian package that installs CASTPREP_LIBXML2_SONAME, for fix hints.
#define CASTPREP_LIBXML2_PACKAGE "libxml2"

// Every libxml2 function CastPrep calls: return type, name, parameters, arguments.
// CASTPREP_LIBXML2_VOID lists the ones returning void.
#define CASTPREP_LIBXML2_FUNCTIONS(X)                                                                             \
    X(xmlParserCtxtPtr, xmlNewParserCtxt, (void), ())                                                             \
    X(xmlDocPtr, xmlCtxtReadMemory,                                                                               \
      (xmlParserCtxtPtr context, const char *buffer, int size, const char *url, const char *encoding, int options), \
      (context, buffer, size, url, encoding, options))                                                            \
    X(xmlNodePtr, xmlDocGetRootElement, (const xmlDoc *document), (document))                                     \
    X(xmlChar *, xmlGetProp, (const xmlNode *node, const xmlChar *name), (node, name))                            \
    X(xmlChar *, xmlNodeGetContent, (const xmlNode *node), (node))                                                \
    X(int, xmlValidateNCName, (const xmlChar *value, int space), (value, space))

#define CASTPREP_LIBXML2_VOID(X)                                                                                  \
    X(xmlInitParser, (void), ())                                                                                  \
    X(xmlFreeParserCtxt, (xmlParserCtxtPtr context), (context))                                                   \
    X(xmlFreeDoc, (xmlDocPtr document), (document))                                                               \
    X(xmlSAX2EntityDecl,                                                                                          \
      (void *context, const xmlChar *name, int type, const xmlChar *publicId, const xmlChar *systemId,             \
       xmlChar *content),                                                                                         \
      (context, name, type, publicId, systemId, content))

/// The resolved functions and libxml2's deallocator, or the reason they could not be resolved.
typedef struct castprep_libxml2_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_LIBXML2_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
    CASTPREP_LIBXML2_VOID(CASTPREP_LIBRARY_VOID_FIELD)
    /// The value of libxml2's `xmlFree` variable (a function pointer the library sets).
    xmlFreeFunc free;
} castprep_libxml2_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_libxml2_resolve(castprep_libxml2_api *api) {
    const char *library = CASTPREP_LIBXML2_SONAME;
    void *handle = castprep_library_open(&api->status, "libxml2 (" CASTPREP_LIBXML2_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_LIBXML2_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
    CASTPREP_LIBXML2_VOID(CASTPREP_LIBRARY_RESOLVE_VOID)
    // xmlFree is a variable holding the deallocator, not a function.
    xmlFreeFunc *deallocator = (xmlFreeFunc *)castprep_library_symbol(&api->status, handle, library, "xmlFree");
    if (deallocator == NULL) return;
    api->free = *deallocator;
}

CASTPREP_LIBRARY_ACCESSORS(libxml2, castprep_libxml2_api, castprep_libxml2_resolve, "install it: apt-get install " CASTPREP_LIBXML2_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_libxml2_checked
CASTPREP_LIBXML2_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
CASTPREP_LIBXML2_VOID(CASTPREP_LIBRARY_VOID_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

/// LIBXML_DOTTED_VERSION is a string macro; expose it as a function for version checks.
static inline const char *castprep_libxml_dotted_version(void) { return LIBXML_DOTTED_VERSION; }

/// xmlFree is a global function-pointer variable, which Swift 6 treats as shared mutable
/// state; calling it through a function keeps strict concurrency checking happy.
static inline void castprep_xmlFree(void *pointer) { castprep_libxml2_checked()->free(pointer); }

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
    castprep_xmlSAX2EntityDecl(context, name, parameter ? XML_INTERNAL_PARAMETER_ENTITY : XML_INTERNAL_GENERAL_ENTITY,
                               NULL, NULL, (xmlChar *)"");
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
    xmlParserCtxtPtr context = castprep_xmlNewParserCtxt();
    if (context == NULL) return NULL;
    castprep_xml_harden(context);
    xmlDocPtr document =
        castprep_xmlCtxtReadMemory(context, bytes, size, name, NULL, castprep_xml_options(XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    if (document == NULL) {
        failure->line = context->lastError.line;
    } else if (castprep_xml_declares_entities(document)) {
        failure->refusedEntities = 1;
        castprep_xmlFreeDoc(document);
        document = NULL;
    }
    castprep_xmlFreeParserCtxt(context);
    return document;
}

#endif
