/* Linked into executables of sanitizer builds only (TESSERA_SANITIZE).
 *
 * Open MPI and the OpenCL loader keep some allocations until exit in plugins they load
 * with dlopen and unload with dlclose before LeakSanitizer runs; their frames then show
 * as "<unknown module>" and no suppression in tests/lsan.supp can match them. This
 * dlclose, which the executable's symbols put in front of libc's, leaves every plugin
 * loaded, so leak reports name the library and only tessera's own leaks fail a test. */
int dlclose(void *handle);

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
