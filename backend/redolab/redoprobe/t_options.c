/* The client options that depend on each other, and option values checked where they are parsed. */
#include <string.h>

#include "probe.h"
#include "t_check.h"
#include "units.h"

static struct client_options base(void)
{
    struct client_options o;
    memset(&o, 0, sizeof o);
    o.mode = MODE_ASYNC;
    o.conns = 1;
    o.message_bytes = 1024 * 1024;
    return o;
}

int main(void)
{
    CHECK(valid_congestion_name("bbr"));
    CHECK(valid_congestion_name("cubic"));
    CHECK(valid_congestion_name("dctcp"));
    CHECK(!valid_congestion_name(""));
    CHECK(!valid_congestion_name("BBR"));
    CHECK(!valid_congestion_name("bbr;reboot"));
    CHECK(!valid_congestion_name("a_name_too_long_x"));

    struct client_options o = base();
    CHECK(client_options_problem(&o) == NULL);
    o.reverse = 1;
    CHECK(client_options_problem(&o) == NULL);
    o.mode = MODE_SYNC;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "async only"));
    o = base();
    o.reverse = 1;
    o.rate_bits_per_second = 1e9;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--rate"));
    o = base();
    o.zerocopy = 1;
    o.congestion = "bbr";
    o.fq_rate_bits_per_second = 1e9;
    CHECK(client_options_problem(&o) == NULL);
    o.cport = 65535;
    o.conns = 1;
    CHECK(client_options_problem(&o) == NULL);
    o.conns = 2;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "65535"));

    /* --schedule paces by itself and replays the client's sending */
    o = base();
    o.schedule = "redo.txt";
    CHECK(client_options_problem(&o) == NULL);
    o.scale = 2;
    o.speedup = 60;
    CHECK(client_options_problem(&o) == NULL);
    o.rate_bits_per_second = 1e9;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--rate or --delay"));
    o.rate_bits_per_second = 0;
    o.delay_us = 10;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--rate or --delay"));
    o.delay_us = 0;
    o.reverse = 1;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--reverse"));
    o = base();
    o.speedup = 2; /* without a schedule */
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--schedule FILE"));
    o = base();
    o.warmup_given = 1; /* --warmup without a schedule */
    o.warmup_seconds = 2;
    CHECK(client_options_problem(&o) != NULL && strstr(client_options_problem(&o), "--warmup"));
    o.schedule = "redo.txt";
    CHECK(client_options_problem(&o) == NULL);

    double rate;
    CHECK(parse_rate("1G", &rate) == 0 && rate == 1e9); /* --fq-rate takes bit rates */
    return T_DONE("t_options");
}
