/*
 * mcp_rpc.c -- JSON-RPC 2.0 framing for `lil mcp` (mcp.h).
 *
 * A message is one JSON value: an object (a request, a notification or a
 * response) or, in protocol 2025-03-26, an array of them (a batch).  The
 * decoder parses with jansson under a size cap and a depth cap (jansson
 * itself caps nesting at its own JSON_PARSER_MAX_DEPTH; the cap here is
 * the server's, checked before parsing so a deep message costs one scan)
 * and classifies:
 *
 *   not JSON, or over the caps          -32700 parse error, id null
 *   JSON that is no object or array,    -32600 invalid request, with the
 *   an empty batch, "jsonrpc" not "2.0",  message's id when it has a
 *   a method that is no string, an id    usable one, else null
 *   that is no string or integer,
 *   params that are no object or array
 *
 * mcp_append is the growable buffer the transports gather bytes in.
 *
 * Nothing here allocates beyond jansson's own values, so a hostile message
 * costs at most its size (fuzz/fuzz_mcp.c).
 */
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

/* The deepest nesting of arrays and objects in buf, counting only outside
 * strings; stops counting once past MCP_JSON_DEPTH. */
static size_t nesting(const char *buf, size_t len)
{
    size_t depth = 0, deepest = 0;
    bool in_string = false;

    for (size_t i = 0; i < len && deepest <= MCP_JSON_DEPTH; i++) {
        char c = buf[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

bool mcp_append(char **data, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (n == 0)
        return true;
    if (*len + n > *cap) {
        size_t grown_cap = *cap ? *cap : 4096;
        char *grown;
        while (grown_cap < *len + n)
            grown_cap *= 2;
        grown = realloc(*data, grown_cap);
        if (!grown)
            return false;
        *data = grown;
        *cap = grown_cap;
    }
    memcpy(*data + *len, p, n);
    *len += n;
    return true;
}

json_t *mcp_rpc_error(json_t *id, int code, const char *message, json_t *data)
{
    json_t *err = json_pack("{s:i, s:s}", "code", code, "message", message);

    if (err && data)
        json_object_set_new(err, "data", data);
    else
        json_decref(data);
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", err);
}

json_t *mcp_rpc_result(json_t *id, json_t *result)
{
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result",
                     result ? result : json_object());
}

json_t *mcp_rpc_notification(const char *method, json_t *params)
{
    json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

    if (msg && params)
        json_object_set_new(msg, "params", params);
    else
        json_decref(params);
    return msg;
}

/* The message's id when it is one a response may carry, else NULL. */
static json_t *usable_id(json_t *msg)
{
    json_t *id = json_object_get(msg, "id");

    if (json_is_string(id) || json_is_integer(id))
        return id;
    return NULL;
}

static int invalid(json_t *msg, const char *why, json_t **err)
{
    *err = mcp_rpc_error(usable_id(msg), MCP_INVALID_REQUEST, why, NULL);
    return -1;
}

int mcp_rpc_classify(json_t *msg, enum mcp_kind *kind, json_t **err)
{
    json_t *method, *id, *params;
    bool has_id;

    *err = NULL;
    if (!json_is_object(msg))
        return invalid(NULL, "Invalid Request: a message is a JSON object", err);
    if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0)
        return invalid(msg, "Invalid Request: \"jsonrpc\" must be \"2.0\"", err);
    method = json_object_get(msg, "method");
    id = json_object_get(msg, "id");
    params = json_object_get(msg, "params");
    has_id = id != NULL;
    if (has_id && !json_is_string(id) && !json_is_integer(id) &&
        !(json_is_null(id) && !method))
        return invalid(msg, "Invalid Request: \"id\" must be a string or an integer",
                       err);
    if (!method) {
        if (has_id &&
            (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
            *kind = MCP_MSG_RESPONSE;
            return 0;
        }
        return invalid(msg, "Invalid Request: no \"method\"", err);
    }
    if (!json_is_string(method))
        return invalid(msg, "Invalid Request: \"method\" must be a string", err);
    if (params && !json_is_object(params) && !json_is_array(params))
        return invalid(msg, "Invalid Request: \"params\" must be an object", err);
    *kind = has_id ? MCP_MSG_REQUEST : MCP_MSG_NOTIFICATION;
    return 0;
}

void mcp_rpc_decode(const char *buf, size_t len, json_t **msg, enum mcp_kind *kind,
                    json_t **err)
{
    json_error_t jerr;
    json_t *doc;

    *msg = NULL;
    *err = NULL;
    if (len > MCP_MESSAGE_MAX) {
        *err = mcp_rpc_error(NULL, MCP_PARSE_ERROR, "Parse error: message too large",
                             NULL);
        return;
    }
    if (nesting(buf, len) > MCP_JSON_DEPTH) {
        *err =
            mcp_rpc_error(NULL, MCP_PARSE_ERROR, "Parse error: nested too deep", NULL);
        return;
    }
    doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!doc) {
        *err = mcp_rpc_error(
            NULL, MCP_PARSE_ERROR, "Parse error",
            json_pack("{s:s, s:i}", "detail", jerr.text, "column", jerr.position));
        return;
    }
    if (json_is_array(doc)) {
        if (json_array_size(doc) == 0) {
            *err = mcp_rpc_error(NULL, MCP_INVALID_REQUEST,
                                 "Invalid Request: an empty batch", NULL);
            json_decref(doc);
            return;
        }
        *kind = MCP_MSG_BATCH;
        *msg = doc;
        return;
    }
    if (mcp_rpc_classify(doc, kind, err) != 0) {
        json_decref(doc);
        return;
    }
    *msg = doc;
}
