// Thin shim over libcurl 7.88 (Debian 12). curl_easy_setopt and curl_easy_getinfo are
// variadic, which Swift cannot call, so each argument type gets a typed wrapper.
#ifndef CASTPREP_CCURL_H
#define CASTPREP_CCURL_H

#include <curl/curl.h>

static inline CURLcode castprep_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*castprep_curl_data_callback)(char *, size_t, size_t, void *);
static inline CURLcode castprep_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                                castprep_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode castprep_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode castprep_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode castprep_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode castprep_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/// CURLVERSION_NOW is a macro naming the newest struct layout this header knows.
static inline curl_version_info_data *castprep_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

#endif
