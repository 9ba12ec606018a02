# Sweeps, fits, plots, claims and hardware presets (issue 6).
fasim_test(test_fit       LABEL unit LIBS fasim_sim m)
fasim_test(test_sweep     LABEL unit LIBS fasim_sim m)
fasim_test(test_claims    LABEL unit LIBS fasim_sim m)
fasim_test(test_sweep_cli LABEL cli  LIBS fasim_sim ARGS $<TARGET_FILE:fasim>)
