"""Every feature gate a Kubernetes component accepts, beyond the ones kubetwin acts on.

kube-scheduler and the kubelet take ``--feature-gates`` (and the kubelet ``featureGates``) for
every gate of the Kubernetes feature set: the gates of ``pkg/features/kube_features.go``
(``defaultVersionedKubernetesFeatureGates``, which relists the generic API server's, the API
extensions', the controller manager's and the z-pages' gates) and component-base's logging
gates. Most of them change nothing kubetwin models (volumes, authentication, the API server's
cache). kubetwin accepts such a gate with a warning that it is not modelled (an error under
``--strict``), refuses a locked one set to the non-default as the component does, and refuses a
name no release knows with the nearest known name.

Source: the versioned specs of ``pkg/features/kube_features.go`` at the start of the v1.36
development cycle (the v1.35 set, one 1.36 entry), plus component-base's logging gates. Gates
added in 1.36 or 1.37 that kubetwin does not act on are missing from it, and a gate's change in
1.36 or later that is not listed keeps its 1.35 spec; the gates kubetwin acts on are in
:data:`kubetwin.model.features.FEATURE_GATES`, which wins over this table.

Each row: ``Name: VERSION on|off STAGE [locked]; ...`` in ascending version order.
"""

from __future__ import annotations

from typing import Final

_TABLE: Final = """
AllowDNSOnlyNodeCSR: 1.0 on GA; 1.31 off DEPRECATED
AllowInsecureKubeletCertificateSigningRequests: 1.0 on GA; 1.31 off DEPRECATED
AnyVolumeDataSource: 1.18 off ALPHA; 1.24 on BETA; 1.33 on GA locked
AuthorizeNodeWithSelectors: 1.31 off ALPHA; 1.32 on BETA; 1.34 on GA locked
AuthorizePodWebsocketUpgradeCreatePermission: 1.35 on BETA
CSIMigrationPortworx: 1.23 off ALPHA; 1.25 off BETA; 1.31 on BETA; 1.33 on GA locked
CSIServiceAccountTokenSecrets: 1.35 on BETA
CSIVolumeHealth: 1.21 off ALPHA
ChangeContainerStatusOnKubeletRestart: 1.0 on GA; 1.35 off DEPRECATED
ClusterTrustBundle: 1.27 off ALPHA; 1.33 off BETA
ClusterTrustBundleProjection: 1.29 off ALPHA; 1.33 off BETA
ContainerCheckpoint: 1.25 off ALPHA; 1.30 on BETA
ContainerRestartRules: 1.34 off ALPHA; 1.35 on BETA
ContainerStopSignals: 1.33 off ALPHA
CrossNamespaceVolumeDataSource: 1.26 off ALPHA
DeploymentReplicaSetTerminatingReplicas: 1.33 off ALPHA; 1.35 on BETA
DisableAllocatorDualWrite: 1.31 off ALPHA; 1.33 off BETA; 1.34 on GA; 1.35 on GA locked
DisableNodeKubeProxyVersion: 1.29 off ALPHA; 1.31 off DEPRECATED; 1.33 on DEPRECATED
EnvFiles: 1.34 off ALPHA; 1.35 on BETA
EventedPLEG: 1.26 off ALPHA
ExecProbeTimeout: 1.20 on GA; 1.35 on GA locked
ExternalServiceAccountTokenSigner: 1.32 off ALPHA; 1.34 on BETA
GangScheduling: 1.35 off ALPHA
GitRepoVolumeDriver: 1.0 on GA; 1.33 off DEPRECATED
HPAConfigurableTolerance: 1.33 off ALPHA; 1.35 on BETA
HPAScaleToZero: 1.16 off ALPHA
HonorPVReclaimPolicy: 1.23 off ALPHA; 1.31 on BETA; 1.33 on GA locked
HostnameOverride: 1.34 off ALPHA; 1.35 on BETA
ImageVolume: 1.31 off ALPHA; 1.33 off BETA; 1.35 on BETA
ImageVolumeWithDigest: 1.35 off ALPHA
InPlacePodVerticalScalingAllocatedStatus: 1.32 off ALPHA; 1.33 off DEPRECATED
InTreePluginPortworxUnregister: 1.23 off ALPHA
JobBackoffLimitPerIndex: 1.28 off ALPHA; 1.29 on BETA; 1.33 on GA locked
JobManagedBy: 1.30 off ALPHA; 1.32 on BETA; 1.35 on GA locked
JobPodReplacementPolicy: 1.28 off ALPHA; 1.29 on BETA; 1.34 on GA locked
JobSuccessPolicy: 1.30 off ALPHA; 1.31 on BETA; 1.33 on GA locked
KubeletFineGrainedAuthz: 1.32 off ALPHA; 1.33 on BETA
KubeletRegistrationGetOnExistsOnly: 1.0 on GA; 1.32 off DEPRECATED
KubeletServiceAccountTokenForCredentialProviders: 1.33 off ALPHA; 1.34 on BETA
LogarithmicScaleDown: 1.21 off ALPHA; 1.22 on BETA; 1.31 on GA locked
MaxUnavailableStatefulSet: 1.24 off ALPHA; 1.35 on BETA
MultiCIDRServiceAllocator: 1.27 off ALPHA; 1.31 off BETA; 1.33 on GA; 1.34 on GA locked
MutableCSINodeAllocatableCount: 1.33 off ALPHA; 1.34 off BETA; 1.35 on BETA
MutablePVNodeAffinity: 1.35 off ALPHA
MutablePodResourcesForSuspendedJobs: 1.35 off ALPHA
MutableSchedulingDirectivesForSuspendedJobs: 1.35 off ALPHA
NFTablesProxyMode: 1.29 off ALPHA; 1.31 on BETA; 1.33 on GA locked
OrderedNamespaceDeletion: 1.30 off BETA; 1.33 on BETA; 1.34 on GA locked
PodAndContainerStatsFromCRI: 1.23 off ALPHA
PodCertificateRequest: 1.34 off ALPHA; 1.35 off BETA
PodDeletionCost: 1.21 off ALPHA; 1.22 on BETA
PodLifecycleSleepAction: 1.29 off ALPHA; 1.30 on BETA; 1.34 on GA locked
PodLifecycleSleepActionAllowZero: 1.32 off ALPHA; 1.33 on BETA; 1.34 on GA locked
PodLogsQuerySplitStreams: 1.32 off ALPHA
PodObservedGenerationTracking: 1.33 off ALPHA; 1.34 on BETA; 1.35 on GA locked
PodReadyToStartContainersCondition: 1.28 off ALPHA; 1.29 on BETA
PodSchedulingReadiness: 1.26 off ALPHA; 1.27 on BETA; 1.30 on GA locked
PodTopologyLabelsAdmission: 1.33 off ALPHA; 1.35 on BETA
PortForwardWebsockets: 1.30 off ALPHA; 1.31 on BETA
PreferSameTrafficDistribution: 1.33 off ALPHA; 1.34 on BETA; 1.35 on GA locked
PreventStaticPodAPIReferences: 1.34 on BETA
ProcMountType: 1.12 off ALPHA; 1.31 off BETA; 1.33 on BETA
RecoverVolumeExpansionFailure: 1.23 off ALPHA; 1.32 on BETA; 1.34 on GA locked
RecursiveReadOnlyMounts: 1.30 off ALPHA; 1.31 on BETA; 1.33 on GA locked
ReduceDefaultCrashLoopBackOffDecay: 1.33 off ALPHA
RelaxedDNSSearchValidation: 1.32 off ALPHA; 1.33 on BETA; 1.34 on GA locked
RelaxedEnvironmentVariableValidation: 1.30 off ALPHA; 1.32 on BETA; 1.34 on GA locked
RelaxedServiceNameValidation: 1.34 off ALPHA
ReloadKubeletServerCertificateFile: 1.31 on BETA
RestartAllContainersOnContainerExits: 1.35 off ALPHA
RotateKubeletServerCertificate: 1.7 off ALPHA; 1.12 on BETA
RuntimeClassInImageCriAPI: 1.29 off ALPHA
SELinuxChangePolicy: 1.32 off ALPHA; 1.33 on BETA
SELinuxMount: 1.30 off ALPHA; 1.33 off BETA
SELinuxMountReadWriteOncePod: 1.25 off ALPHA; 1.27 off BETA; 1.28 on BETA
SeparateTaintEvictionController: 1.29 on BETA; 1.34 on GA locked
ServiceAccountNodeAudienceRestriction: 1.32 off BETA; 1.33 on BETA
ServiceAccountTokenJTI: 1.29 off ALPHA; 1.30 on BETA; 1.32 on GA locked
ServiceAccountTokenNodeBinding: 1.29 off ALPHA; 1.31 on BETA; 1.33 on GA locked
ServiceAccountTokenNodeBindingValidation: 1.29 off ALPHA; 1.30 on BETA; 1.32 on GA locked
ServiceAccountTokenPodNodeInfo: 1.29 off ALPHA; 1.30 on BETA; 1.32 on GA locked
ServiceTrafficDistribution: 1.30 off ALPHA; 1.31 on BETA; 1.33 on GA locked
StatefulSetSemanticRevisionComparison: 1.0 on BETA
StorageNamespaceIndex: 1.30 on BETA; 1.33 on DEPRECATED
StorageVersionMigrator: 1.30 off ALPHA; 1.35 off BETA
StreamingCollectionEncodingToJSON: 1.33 on BETA; 1.34 on GA locked
StreamingCollectionEncodingToProtobuf: 1.33 on BETA; 1.34 on GA locked
StrictIPCIDRValidation: 1.33 off ALPHA
SupplementalGroupsPolicy: 1.31 off ALPHA; 1.33 on BETA; 1.35 on GA locked
SystemdWatchdog: 1.32 on BETA; 1.35 on GA locked
TopologyAwareHints: 1.21 off ALPHA; 1.23 off BETA; 1.24 on BETA; 1.33 on GA locked
TranslateStreamCloseWebsocketRequests: 1.29 off ALPHA; 1.30 on BETA
UserNamespacesHostNetworkSupport: 1.35 off ALPHA
UserNamespacesSupport: 1.25 off ALPHA; 1.30 off BETA; 1.33 on BETA
VolumeAttributesClass: 1.29 off ALPHA; 1.31 off BETA; 1.34 on GA; 1.36 on GA locked
VolumeLimitScaling: 1.35 off ALPHA
WinDSR: 1.14 off ALPHA; 1.33 on BETA; 1.34 on GA locked
WinOverlay: 1.14 off ALPHA; 1.20 on BETA; 1.34 on GA locked
WindowsCPUAndMemoryAffinity: 1.32 off ALPHA
WindowsGracefulNodeShutdown: 1.32 off ALPHA; 1.34 on BETA
WindowsHostNetwork: 1.26 off ALPHA; 1.33 off DEPRECATED
CRDObservedGenerationTracking: 1.35 off BETA
CRDValidationRatcheting: 1.28 off ALPHA; 1.30 on BETA; 1.33 on GA locked
CustomResourceFieldSelectors: 1.30 off ALPHA; 1.31 on BETA; 1.32 on GA locked
APIResponseCompression: 1.8 off ALPHA; 1.16 on BETA
APIServerIdentity: 1.20 off ALPHA; 1.26 on BETA
APIServerTracing: 1.22 off ALPHA; 1.27 on BETA; 1.34 on GA locked
APIServingWithRoutine: 1.30 off ALPHA
AggregatedDiscoveryRemoveBetaType: 1.0 off GA; 1.33 on DEPRECATED; 1.35 on DEPRECATED locked
AllowParsingUserUIDFromCertAuth: 1.33 on BETA
AllowUnsafeMalformedObjectDeletion: 1.32 off ALPHA
AnonymousAuthConfigurableEndpoints: 1.31 off ALPHA; 1.32 on BETA; 1.34 on GA locked
AuthorizeWithSelectors: 1.31 off ALPHA; 1.32 on BETA; 1.34 on GA locked
BtreeWatchCache: 1.32 on BETA; 1.33 on GA locked
CBORServingAndStorage: 1.32 off ALPHA
ConcurrentWatchObjectDecode: 1.31 off BETA
ConsistentListFromCache: 1.28 off ALPHA; 1.31 on BETA; 1.34 on GA locked
ConstrainedImpersonation: 1.35 off ALPHA
CoordinatedLeaderElection: 1.31 off ALPHA; 1.33 off BETA
DeclarativeValidation: 1.33 on BETA
DeclarativeValidationTakeover: 1.33 off BETA
DetectCacheInconsistency: 1.34 on BETA
KMSv1: 1.0 on GA; 1.28 on DEPRECATED; 1.29 off DEPRECATED
ListFromCacheSnapshot: 1.33 off ALPHA; 1.34 on BETA
MutatingAdmissionPolicy: 1.32 off ALPHA; 1.34 off BETA
OpenAPIEnums: 1.23 off ALPHA; 1.24 on BETA
RemoteRequestHeaderUID: 1.32 off ALPHA; 1.33 on BETA
ResilientWatchCacheInitialization: 1.31 on BETA; 1.34 on GA locked
RetryGenerateName: 1.30 off ALPHA; 1.31 on BETA; 1.32 on GA locked
SeparateCacheWatchRPC: 1.28 on BETA; 1.33 off DEPRECATED
SizeBasedListCostEstimate: 1.34 on BETA
StorageVersionAPI: 1.20 off ALPHA
StorageVersionHash: 1.14 off ALPHA; 1.15 on BETA
StructuredAuthenticationConfiguration: 1.29 off ALPHA; 1.30 on BETA; 1.34 on GA locked
StructuredAuthenticationConfigurationEgressSelector: 1.34 on BETA
StructuredAuthenticationConfigurationJWKSMetrics: 1.35 on BETA
StructuredAuthorizationConfiguration: 1.29 off ALPHA; 1.30 on BETA; 1.32 on GA locked
TokenRequestServiceAccountUIDValidation: 1.34 on BETA
UnauthenticatedHTTP2DOSMitigation: 1.25 off BETA; 1.29 on BETA
UnknownVersionInteroperabilityProxy: 1.28 off ALPHA
WatchCacheInitializationPostStartHook: 1.31 off BETA
WatchFromStorageWithoutResourceVersion: 1.27 off BETA; 1.33 off DEPRECATED locked
WatchList: 1.27 off ALPHA; 1.32 on BETA; 1.33 off BETA; 1.34 on BETA
CloudControllerManagerWatchBasedRoutesReconciliation: 1.35 off ALPHA
CloudControllerManagerWebhook: 1.27 off ALPHA
ComponentFlagz: 1.32 off ALPHA
ComponentStatusz: 1.32 off ALPHA
ContextualLogging: 1.24 off ALPHA; 1.30 on BETA
LoggingAlphaOptions: 1.24 off ALPHA
LoggingBetaOptions: 1.24 on BETA
"""


def _parse() -> dict[str, tuple[tuple[str, bool, str, bool], ...]]:
    out: dict[str, tuple[tuple[str, bool, str, bool], ...]] = {}
    for line in _TABLE.strip().splitlines():
        name, _, rows = line.partition(": ")
        specs = []
        for row in rows.split("; "):
            words = row.split()
            specs.append((words[0], words[1] == "on", words[2], words[-1] == "locked"))
        out[name] = tuple(specs)
    return out


#: gate name -> ((since version, default, stage, locked), ...) ascending
UPSTREAM_GATES: Final = _parse()
