/* circuit on p100x4 shared by the tests of a cmocka group; see
 * llm_fixture.h. Apart from llm_fixture.c, whose functions take their
 * context as an argument, because it uses the unit fixture's. */
#include "../unit/fixture.h"
#include "llm_fixture.h"

llm_world llm_circuit;

int llm_circuit_setup(void **state) {
  if (fixture_setup(state))
    return -1;
  return llm_world_open(ctx, "circuit", "p100x4", &llm_circuit);
}

int llm_circuit_teardown(void **state) {
  llm_world_close(&llm_circuit);
  return fixture_teardown(state);
}
