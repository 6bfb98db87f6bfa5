#ifndef REDOPROBE_JSON_FWD_H
#define REDOPROBE_JSON_FWD_H
struct json;
#endif
