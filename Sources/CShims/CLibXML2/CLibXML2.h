// Thin shim over libxml2 2.9 (Debian 12). Parsing options used by CastPrep are
// XML_PARSE_NONET | XML_PARSE_NO_XXE-equivalents: no network, no entity expansion, no DTD.
#ifndef CASTPREP_CLIBXML2_H
#define CASTPREP_CLIBXML2_H

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

/// LIBXML_DOTTED_VERSION is a string macro; expose it as a function for version checks.
static inline const char *castprep_libxml_dotted_version(void) { return LIBXML_DOTTED_VERSION; }

/// xmlFree is a global function-pointer variable, which Swift 6 treats as shared mutable
/// state; calling it through a function keeps strict concurrency checking happy.
static inline void castprep_xmlFree(void *pointer) { xmlFree(pointer); }

#endif
