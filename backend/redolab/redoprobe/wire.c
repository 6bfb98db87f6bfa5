#include "wire.h"

#include <string.h>

void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) << 32 | get_u32(p + 4); }

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

void encode_hello(const struct hello *h, uint8_t out[HELLO_BYTES])
{
    memset(out, 0, HELLO_BYTES);
    memcpy(out, MAGIC_HELLO, 4);
    put_u16(out + 4, h->protocol);
    out[6] = h->mode;
    out[7] = h->flags;
    put_u16(out + 8, h->conns);
    put_u32(out + 12, h->message_bytes);
    put_u64(out + 16, h->sockbuf_bytes);
    put_u64(out + 24, h->duration_ms);
}

int decode_hello(const uint8_t in[HELLO_BYTES], struct hello *h)
{
    if (memcmp(in, MAGIC_HELLO, 4) != 0)
        return -1;
    h->protocol = get_u16(in + 4);
    h->mode = in[6];
    h->flags = in[7];
    h->conns = get_u16(in + 8);
    h->message_bytes = get_u32(in + 12);
    h->sockbuf_bytes = get_u64(in + 16);
    h->duration_ms = get_u64(in + 24);
    return 0;
}

void encode_ack(const struct ack *a, uint8_t out[ACK_BYTES])
{
    memset(out, 0, ACK_BYTES);
    memcpy(out, MAGIC_HELLO, 4);
    put_u16(out + 4, a->protocol);
    put_u16(out + 6, a->status);
    memcpy(out + 8, a->cookie, COOKIE_BYTES);
    put_u32(out + 24, a->rcvbuf_bytes);
    put_u32(out + 28, a->sndbuf_bytes);
}

int decode_ack(const uint8_t in[ACK_BYTES], struct ack *a)
{
    if (memcmp(in, MAGIC_HELLO, 4) != 0)
        return -1;
    a->protocol = get_u16(in + 4);
    a->status = get_u16(in + 6);
    memcpy(a->cookie, in + 8, COOKIE_BYTES);
    a->rcvbuf_bytes = get_u32(in + 24);
    a->sndbuf_bytes = get_u32(in + 28);
    return 0;
}

void encode_result(const struct result *r, uint8_t out[RESULT_BYTES])
{
    memcpy(out, MAGIC_RESULT, 4);
    put_u64(out + 4, r->bytes_received);
    put_u64(out + 12, r->write_us);
    put_u64(out + 20, r->cpu_user_us);
    put_u64(out + 28, r->cpu_system_us);
    put_u32(out + 36, r->streams);
    put_u32(out + 40, r->flags);
}

int decode_result(const uint8_t in[RESULT_BYTES], struct result *r)
{
    if (memcmp(in, MAGIC_RESULT, 4) != 0)
        return -1;
    r->bytes_received = get_u64(in + 4);
    r->write_us = get_u64(in + 12);
    r->cpu_user_us = get_u64(in + 20);
    r->cpu_system_us = get_u64(in + 28);
    r->streams = get_u32(in + 36);
    r->flags = get_u32(in + 40);
    return 0;
}

void encode_end(uint64_t bytes_sent, uint8_t out[END_BYTES])
{
    memcpy(out, MAGIC_END, 4);
    put_u64(out + 4, bytes_sent);
}

int decode_end(const uint8_t in[END_BYTES], uint64_t *bytes_sent)
{
    if (memcmp(in, MAGIC_END, 4) != 0)
        return -1;
    *bytes_sent = get_u64(in + 4);
    return 0;
}

void encode_data_header(const uint8_t cookie[COOKIE_BYTES], uint32_t id, uint8_t out[DATA_HEADER_BYTES])
{
    memcpy(out, MAGIC_DATA, 4);
    memcpy(out + 4, cookie, COOKIE_BYTES);
    put_u32(out + 20, id);
}

int decode_data_header(const uint8_t in[DATA_HEADER_BYTES], const uint8_t cookie[COOKIE_BYTES], uint32_t *id)
{
    if (memcmp(in, MAGIC_DATA, 4) != 0 || memcmp(in + 4, cookie, COOKIE_BYTES) != 0)
        return -1;
    *id = get_u32(in + 20);
    return 0;
}
