/*
 * quickstart.c -- the C example of README.md, kept identical to it (the test
 * quickstart checks).  Run it twice: the second run replays "fetch".
 */
#include <lil/lil.h>
#include <stdio.h>

/* The work of one step: slow, costly, or not to be repeated. */
static int fetch_price(lil_call *call, void *ud)
{
    const char *sku = ud;

    /* ... call the service, compute ... */
    if (lil_call_set_jsonf(call, "{s:s, s:i}", "sku", sku, "cents", 4200) != LIL_OK)
        return 1;
    return 0;
}

int main(void)
{
    static char sku[] = "sku-7";
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes price;
    lil_status rc;

    rc = lil_store_open(NULL, NULL, &st); /* $LIL_DIR or ./.lil */
    if (rc == LIL_OK)
        rc = lil_run_open(st, "invoice-42", NULL, &run); /* creates or resumes */
    if (rc == LIL_OK)
        rc = lil_step(run, "fetch", fetch_price, sku, &price);
    if (rc == LIL_OK) {
        /* First run: fetch_price ran.  After a crash: the journaled result. */
        printf("price: %s\n", (const char *)price.data);
        lil_free(price.data);
        rc = lil_run_complete(run, "ok", 2);
    }
    if (rc != LIL_OK && rc != LIL_E_DONE)
        fprintf(stderr, "lil: %s: %s\n", lil_status_name(rc), lil_errmsg());
    lil_run_close(run);
    lil_store_close(st);
    return rc == LIL_OK || rc == LIL_E_DONE ? 0 : 1;
}
