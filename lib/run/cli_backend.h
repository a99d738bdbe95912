/* cli_backend.h — the kit's choice of backend for --backend (cli_backend.c), called by
 * drift_cli_parse once the options are read. */
#ifndef DRIFT_CLI_BACKEND_H
#define DRIFT_CLI_BACKEND_H

#include "cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuda: the device or a one-line error (exit 2) before any work or file; auto: the device
 * when there is one and the experiment computes through the dispatcher, said once on stderr
 * (a CPU fallback is said only when auto was asked for explicitly: the default run stays
 * quiet); cpu: the CPU. Sets cli->backend to the one chosen. */
void drift_cli_select_backend(drift_cli_t *cli, int explicit_auto);

#ifdef __cplusplus
}
#endif

#endif
