#ifndef KEYHAVEN_CTSS2_SHIM_H
#define KEYHAVEN_CTSS2_SHIM_H
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_mu.h>

// The TPM's properties as GetCapability answers them: a C array Swift sees as a tuple of 127.
static inline UINT32 kh_tpm_property_count(const TPMS_CAPABILITY_DATA *data) { return data->data.tpmProperties.count; }
static inline TPMS_TAGGED_PROPERTY kh_tpm_property(const TPMS_CAPABILITY_DATA *data, UINT32 index) {
    return data->data.tpmProperties.tpmProperty[index];
}
#endif
