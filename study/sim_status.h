/*
 * sim_status.h — what a study returns: success, a failure of the run, or a
 * request that cannot be served as asked. The command line passes these on
 * as its exit statuses (0, 1 and 2, as the manual page documents), so the
 * values are fixed.
 */
#ifndef FASIM_SIM_STATUS_H
#define FASIM_SIM_STATUS_H

enum {
    SIM_OK = 0,       /* done */
    SIM_EFAIL = 1,    /* a failure other than the request's: memory, a file, a refused run */
    SIM_EUSAGE = 2    /* the request itself is wrong: an option, a value, a combination */
};

#endif /* FASIM_SIM_STATUS_H */
