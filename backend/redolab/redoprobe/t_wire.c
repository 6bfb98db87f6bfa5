/* The control protocol's messages (wire.c) survive an encode/decode round trip, in network byte
 * order, and a message without its magic (or a data header without the test's cookie) is refused
 * (make check). */
#include <stdint.h>
#include <string.h>

#include "probe.h"
#include "t_check.h"
#include "wire.h"

static uint8_t wire[64];

/* integers go out big-endian, whatever this machine's order */
static void check_integers(void)
{
    put_u32(wire, 0x01020304u);
    CHECK(wire[0] == 1 && wire[1] == 2 && wire[2] == 3 && wire[3] == 4);
    CHECK(get_u32(wire) == 0x01020304u);
    put_u64(wire, 0x0102030405060708ull);
    CHECK(wire[0] == 1 && wire[7] == 8);
    CHECK(get_u64(wire) == 0x0102030405060708ull);
}

static void check_hello(void)
{
    struct hello hello = {
        .protocol = PROBE_PROTOCOL, .mode = MODE_SYNC, .flags = HELLO_REVERSE | HELLO_ZEROCOPY,
        .conns = 1024, .message_bytes = 1u << 20, .sockbuf_bytes = 64ull << 20, .duration_ms = 3600000,
    };
    struct hello got_hello;
    memset(&got_hello, 0xff, sizeof got_hello);
    encode_hello(&hello, wire);
    CHECK(memcmp(wire, MAGIC_HELLO, 4) == 0);
    CHECK(decode_hello(wire, &got_hello) == 0);
    CHECK(got_hello.protocol == PROBE_PROTOCOL && got_hello.mode == MODE_SYNC);
    CHECK(got_hello.flags == (HELLO_REVERSE | HELLO_ZEROCOPY) && got_hello.conns == 1024);
    CHECK(got_hello.message_bytes == 1u << 20 && got_hello.sockbuf_bytes == 64ull << 20);
    CHECK(got_hello.duration_ms == 3600000);
    wire[0] = 'X';
    CHECK(decode_hello(wire, &got_hello) == -1); /* not redoprobe: refused, not read */
}

static void check_ack(void)
{
    struct ack ack = {.protocol = PROBE_PROTOCOL, .status = ACK_BAD_PARAMS,
                      .rcvbuf_bytes = 6291456, .sndbuf_bytes = 4194304};
    for (int i = 0; i < COOKIE_BYTES; i++)
        ack.cookie[i] = (uint8_t)(0xa0 + i);
    struct ack got_ack;
    memset(&got_ack, 0, sizeof got_ack);
    encode_ack(&ack, wire);
    CHECK(decode_ack(wire, &got_ack) == 0);
    CHECK(got_ack.protocol == PROBE_PROTOCOL && got_ack.status == ACK_BAD_PARAMS);
    CHECK(memcmp(got_ack.cookie, ack.cookie, COOKIE_BYTES) == 0);
    CHECK(got_ack.rcvbuf_bytes == 6291456 && got_ack.sndbuf_bytes == 4194304);
    wire[1] = 0;
    CHECK(decode_ack(wire, &got_ack) == -1);
}

static void check_result(void)
{
    struct result result = {.bytes_received = 123456789012345ull, .write_us = 42, .cpu_user_us = 7,
                            .cpu_system_us = 9, .streams = 8, .flags = 1};
    struct result got_result;
    memset(&got_result, 0, sizeof got_result);
    encode_result(&result, wire);
    CHECK(memcmp(wire, MAGIC_RESULT, 4) == 0);
    CHECK(decode_result(wire, &got_result) == 0);
    CHECK(got_result.bytes_received == 123456789012345ull && got_result.write_us == 42);
    CHECK(got_result.cpu_user_us == 7 && got_result.cpu_system_us == 9);
    CHECK(got_result.streams == 8 && got_result.flags == 1);
    wire[3] = 0;
    CHECK(decode_result(wire, &got_result) == -1);
}

static void check_end(void)
{
    uint64_t sent = 0;
    encode_end(0x0102030405060708ull, wire);
    CHECK(memcmp(wire, MAGIC_END, 4) == 0 && wire[4] == 1 && wire[11] == 8);
    CHECK(decode_end(wire, &sent) == 0 && sent == 0x0102030405060708ull);
    wire[0] = 'X';
    CHECK(decode_end(wire, &sent) == -1);
}

static void check_data_header(void)
{
    uint8_t cookie[COOKIE_BYTES], other[COOKIE_BYTES];
    for (int i = 0; i < COOKIE_BYTES; i++)
        cookie[i] = other[i] = (uint8_t)(0x10 + i);
    other[COOKIE_BYTES - 1] ^= 1;
    uint32_t id = 0;
    encode_data_header(cookie, 1023, wire);
    CHECK(memcmp(wire, MAGIC_DATA, 4) == 0 && memcmp(wire + 4, cookie, COOKIE_BYTES) == 0);
    CHECK(get_u32(wire + 20) == 1023);
    CHECK(decode_data_header(wire, cookie, &id) == 0 && id == 1023);
    CHECK(decode_data_header(wire, other, &id) == -1); /* another test's connection */
    wire[0] = 'X';
    CHECK(decode_data_header(wire, cookie, &id) == -1);
}

int main(void)
{
    check_integers();
    check_hello();
    check_ack();
    check_result();
    check_end();
    check_data_header();
    return T_DONE("t_wire");
}
